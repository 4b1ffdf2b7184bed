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
      trie_.push_back({static_cast<uint8_t>(s[k]), static_cast<uint32_t>(k + 1), 0, t, t});
    }
    trie_tokens_.push_back(id);
    ++trie_[open.back()].tokens_end;
    max_depth_ = std::max(max_depth_, static_cast<uint32_t>(s.size()));
    prev = &s;
  }
  for (uint32_t n : open) trie_[n].skip = static_cast<uint32_t>(trie_.size());
}

std::shared_ptr<const Vocabulary> Vocabulary::from_tokenizer(const tokenizer::Tokenizer& tok,
                                                             std::vector<int32_t> end_ids) {
  std::vector<std::optional<std::string>> bytes(tok.vocab_size());
  for (int32_t id = 0; id < tok.vocab_size(); ++id)
    if (tok.id_to_token(id) != nullptr && !tok.is_special(id)) bytes[id] = tok.token_bytes(id);
  return std::make_shared<const Vocabulary>(std::move(bytes), std::move(end_ids));
}

}  // namespace heron::grammar
