#include "heron/grammar/vocabulary.h"

#include <algorithm>

#include "heron/core/error.h"
#include "heron/tokenizer/tokenizer.h"

namespace heron::grammar {

Vocabulary::Vocabulary(std::vector<std::optional<std::string>> bytes, std::vector<int32_t> end_ids)
    : bytes_(std::move(bytes)), end_ids_(std::move(end_ids)), is_end_(bytes_.size(), 0) {
  for (int32_t id : end_ids_) {
    if (id < 0 || id >= size())
      throw Error("end token id " + std::to_string(id) + " is outside the vocabulary of " +
                  std::to_string(size()));
    is_end_[id] = 1;
  }
  std::vector<int32_t> ids;
  for (int32_t id = 0; id < size(); ++id)
    if (!is_end_[id] && bytes_[id] && !bytes_[id]->empty()) ids.push_back(id);
  std::sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) {
    return *bytes_[a] < *bytes_[b] || (*bytes_[a] == *bytes_[b] && a < b);
  });
  // Sorted strings share their prefix with the previous one: each adds nodes only past it.
  std::vector<uint32_t> open;  // the path of the last string, as node indexes
  const std::string* prev = nullptr;
  for (int32_t id : ids) {
    const std::string& s = *bytes_[id];
    size_t common = 0;
    if (prev) {
      while (common < prev->size() && common < s.size() && (*prev)[common] == s[common]) ++common;
    }
    for (size_t k = common; k < open.size(); ++k)
      trie_[open[k]].skip = static_cast<uint32_t>(trie_.size());
    open.resize(common);
    for (size_t k = common; k < s.size(); ++k) {
      open.push_back(static_cast<uint32_t>(trie_.size()));
      const auto t = static_cast<uint32_t>(trie_tokens_.size());
      trie_.push_back(
          {static_cast<uint8_t>(s[k]), false, static_cast<uint32_t>(k + 1), 0, t, t, 0});
    }
    trie_tokens_.push_back(id);
    ++trie_[open.back()].tokens_end;
    max_depth_ = std::max(max_depth_, static_cast<uint32_t>(s.size()));
    prev = &s;
  }
  for (uint32_t n : open) trie_[n].skip = static_cast<uint32_t>(trie_.size());
  // Backwards, so children come first: for each node the UTF-8 states in which its whole
  // subtree reads as plain text (bit q: entering the node in state q).
  std::vector<uint8_t> ok(trie_.size());
  for (size_t n = trie_.size(); n-- > 0;) {
    TrieNode& node = trie_[n];
    for (int q = 0; q < 8; ++q) {
      const int to = plain_next(q, node.byte);
      bool all = to >= 0;
      for (size_t c = n + 1; all && c < node.skip; c = trie_[c].skip) all = (ok[c] >> to) & 1;
      if (all) ok[n] |= static_cast<uint8_t>(1 << q);
    }
    node.plain = ok[n] & 1;
    node.subtree_end = node.skip < trie_.size() ? trie_[node.skip].tokens_begin
                                                : static_cast<uint32_t>(trie_tokens_.size());
  }
}

int Vocabulary::plain_next(int state, uint8_t b) {
  // States: 0 boundary; 1, 2, 5 need 1, 2, 3 more continuation bytes; 3 after E0, 4 after
  // ED, 6 after F0, 7 after F4 (whose next byte has a narrower range).
  auto in = [b](int lo, int hi) { return b >= lo && b <= hi; };
  switch (state) {
    case 0:
      if (in(0x20, 0x7F)) return b == '"' || b == '\\' ? -1 : 0;
      if (in(0xC2, 0xDF)) return 1;
      if (b == 0xE0) return 3;
      if (in(0xE1, 0xEC) || in(0xEE, 0xEF)) return 2;
      if (b == 0xED) return 4;
      if (b == 0xF0) return 6;
      if (in(0xF1, 0xF3)) return 5;
      if (b == 0xF4) return 7;
      return -1;
    case 1:
      return in(0x80, 0xBF) ? 0 : -1;
    case 2:
      return in(0x80, 0xBF) ? 1 : -1;
    case 3:
      return in(0xA0, 0xBF) ? 1 : -1;
    case 4:
      return in(0x80, 0x9F) ? 1 : -1;
    case 5:
      return in(0x80, 0xBF) ? 2 : -1;
    case 6:
      return in(0x90, 0xBF) ? 2 : -1;
    case 7:
      return in(0x80, 0x8F) ? 2 : -1;
  }
  return -1;
}

std::shared_ptr<const Vocabulary> Vocabulary::from_tokenizer(const tokenizer::Tokenizer& tok,
                                                             std::vector<int32_t> end_ids) {
  std::vector<std::optional<std::string>> bytes(tok.vocab_size());
  for (int32_t id = 0; id < tok.vocab_size(); ++id)
    if (tok.id_to_token(id) != nullptr && !tok.is_special(id)) bytes[id] = tok.token_bytes(id);
  return std::make_shared<const Vocabulary>(std::move(bytes), std::move(end_ids));
}

}  // namespace heron::grammar
