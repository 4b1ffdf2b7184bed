#include "heron/tokenizer/added_tokens.h"

#include <unicode/uchar.h>

#include <array>

#include "heron/tokenizer/utf8.h"

namespace heron::tokenizer {
namespace {

// Rust regex's Unicode \w: Alphabetic, marks, decimal digits, connector punctuation,
// Join_Control. HF uses it for single_word boundaries.
bool is_word_char(char32_t c) {
  const auto cp = static_cast<UChar32>(c);
  if (u_hasBinaryProperty(cp, UCHAR_ALPHABETIC) || u_hasBinaryProperty(cp, UCHAR_JOIN_CONTROL)) {
    return true;
  }
  const int8_t t = u_charType(cp);
  return t == U_NON_SPACING_MARK || t == U_ENCLOSING_MARK || t == U_COMBINING_SPACING_MARK ||
         t == U_DECIMAL_DIGIT_NUMBER || t == U_CONNECTOR_PUNCTUATION;
}

bool is_space_char(char32_t c) {
  return u_isUWhiteSpace(static_cast<UChar32>(c));
}

// Start of the code point that ends just before `end` (text is valid UTF-8).
size_t prev_char_start(std::string_view text, size_t end) {
  size_t i = end - 1;
  while (i > 0 && (static_cast<uint8_t>(text[i]) & 0xC0) == 0x80) --i;
  return i;
}

}  // namespace

// Byte trie over token contents; a node's `token` indexes tokens_ when a token ends there.
struct AddedVocabulary::Trie {
  struct Node {
    std::vector<std::pair<uint8_t, int32_t>> next;
    int32_t token = -1;
  };
  std::vector<Node> nodes{Node{}};
  std::array<bool, 256> first{};  // bytes that can start a match: skips most positions fast

  void insert(std::string_view key, int32_t token) {
    if (key.empty()) return;
    first[static_cast<uint8_t>(key[0])] = true;
    int32_t n = 0;
    for (char ch : key) {
      const auto b = static_cast<uint8_t>(ch);
      int32_t child = -1;
      for (const auto& [byte, idx] : nodes[n].next)
        if (byte == b) child = idx;
      if (child < 0) {
        child = static_cast<int32_t>(nodes.size());
        nodes[n].next.emplace_back(b, child);
        nodes.emplace_back();
      }
      n = child;
    }
    nodes[n].token = token;  // a later duplicate wins, as HF's map insert does
  }

  // Longest token starting at text[pos]: (token index, length) or (-1, 0).
  std::pair<int32_t, size_t> longest(std::string_view text, size_t pos) const {
    int32_t n = 0, best = -1;
    size_t best_len = 0;
    for (size_t i = pos; i < text.size(); ++i) {
      const auto b = static_cast<uint8_t>(text[i]);
      int32_t child = -1;
      for (const auto& [byte, idx] : nodes[n].next)
        if (byte == b) child = idx;
      if (child < 0) break;
      n = child;
      if (nodes[n].token >= 0) {
        best = nodes[n].token;
        best_len = i + 1 - pos;
      }
    }
    return {best, best_len};
  }

  bool empty() const { return nodes.size() == 1; }
};

AddedVocabulary::AddedVocabulary()
    : raw_trie_(std::make_unique<Trie>()), normalized_trie_(std::make_unique<Trie>()) {}

AddedVocabulary::AddedVocabulary(std::vector<AddedToken> tokens, const Normalizer* normalizer)
    : AddedVocabulary() {
  tokens_ = std::move(tokens);
  for (size_t i = 0; i < tokens_.size(); ++i) {
    const AddedToken& t = tokens_[i];
    by_id_[t.id] = i;
    by_content_[t.content] = t.id;
    if (t.normalized) {
      std::string spelled = t.content;
      if (normalizer != nullptr) normalizer->normalize(spelled);
      normalized_trie_->insert(spelled, static_cast<int32_t>(i));
    } else {
      raw_trie_->insert(t.content, static_cast<int32_t>(i));
    }
  }
}

AddedVocabulary::~AddedVocabulary() = default;
AddedVocabulary::AddedVocabulary(AddedVocabulary&&) noexcept = default;
AddedVocabulary& AddedVocabulary::operator=(AddedVocabulary&&) noexcept = default;

const AddedToken* AddedVocabulary::find(int32_t id) const {
  const auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &tokens_[it->second];
}

std::optional<int32_t> AddedVocabulary::token_to_id(std::string_view content) const {
  const auto it = by_content_.find(std::string(content));
  if (it == by_content_.end()) return std::nullopt;
  return it->second;
}

void AddedVocabulary::split(std::string_view text, size_t origin_len, const Trie& trie,
                            bool parse_special, std::vector<Segment>& out) const {
  size_t emitted = 0;  // end of the last segment pushed
  size_t pos = 0;
  while (pos < text.size()) {
    if (!trie.first[static_cast<uint8_t>(text[pos])]) {
      ++pos;
      continue;
    }
    const auto [index, len] = trie.longest(text, pos);
    if (index < 0) {
      ++pos;
      continue;
    }
    const AddedToken& tok = tokens_[index];
    size_t start = pos, stop = pos + len;
    // Like HF's match iterator, a rejected match still consumes its span.
    pos = stop;
    if (start < emitted) continue;  // inside whitespace a previous rstrip took
    if (tok.special && !parse_special) continue;
    if (tok.single_word) {
      const bool word_before =
          start > 0 && is_word_char(utf8::decode(text, prev_char_start(text, start)).cp);
      const bool word_after = stop < text.size() && is_word_char(utf8::decode(text, stop).cp);
      if (word_before || word_after) continue;
    }
    if (tok.lstrip) {
      while (start > emitted) {
        const size_t p = prev_char_start(text, start);
        if (!is_space_char(utf8::decode(text, p).cp)) break;
        start = p;
      }
    }
    if (tok.rstrip) {
      while (stop < text.size()) {
        const utf8::Decoded d = utf8::decode(text, stop);
        if (!is_space_char(d.cp)) break;
        stop += d.len;
      }
    }
    if (start > emitted) {
      out.push_back(
          {std::string(text.substr(emitted, start - emitted)), -1, emitted == 0 ? origin_len : 0});
    }
    out.push_back({std::string(), tok.id});
    emitted = stop;
  }
  if (emitted < text.size()) {
    out.push_back({std::string(text.substr(emitted)), -1, emitted == 0 ? origin_len : 0});
  }
}

void AddedVocabulary::extract_and_normalize(std::string_view text, bool parse_special,
                                            const Normalizer* normalizer,
                                            std::vector<Segment>& out) const {
  std::vector<Segment> raw;
  const size_t first_len = text.empty() ? 0 : utf8::decode(text, 0).len;
  if (raw_trie_->empty()) {
    raw.push_back({std::string(text), -1, first_len});
  } else {
    split(text, first_len, *raw_trie_, parse_special, raw);
  }
  for (Segment& seg : raw) {
    if (seg.id >= 0) {
      out.push_back(std::move(seg));
      continue;
    }
    if (normalizer != nullptr) {
      if (seg.origin_len > 0) {
        // What the first character normalizes to is what still stems from it (HF tracks
        // this with alignments): a prefix a normalizer adds, or nothing once stripped.
        std::string first = seg.text.substr(0, seg.origin_len);
        normalizer->normalize(first);
        seg.origin_len = first.size();
      }
      normalizer->normalize(seg.text);
    }
    if (normalized_trie_->empty()) {
      if (!seg.text.empty()) out.push_back(std::move(seg));
    } else {
      split(seg.text, seg.origin_len, *normalized_trie_, parse_special, out);
    }
  }
}

}  // namespace heron::tokenizer
