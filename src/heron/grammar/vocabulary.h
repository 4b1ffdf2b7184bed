#pragma once
// A model's vocabulary as raw bytes, with a byte trie of every token so that a mask is one
// walk over shared prefixes instead of one parse per token.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace heron::tokenizer {
class Tokenizer;
}

namespace heron::grammar {

class Vocabulary {
 public:
  // bytes[id] == nullopt (or empty): never allowed (special tokens, ids without a token).
  // end_ids: the tokens that end generation; allowed only where the value is complete.
  Vocabulary(std::vector<std::optional<std::string>> bytes, std::vector<int32_t> end_ids);
  // Tokenizer::token_bytes(id) for non-special ids, nullopt for special ones and ids
  // without a token.
  static std::shared_ptr<const Vocabulary> from_tokenizer(const tokenizer::Tokenizer& tok,
                                                          std::vector<int32_t> end_ids);

  int32_t size() const { return static_cast<int32_t>(bytes_.size()); }
  const std::optional<std::string>& bytes(int32_t id) const { return bytes_[id]; }
  bool is_end(int32_t id) const { return is_end_[id] != 0; }
  const std::vector<int32_t>& end_ids() const { return end_ids_; }

  // The trie of all non-end tokens with bytes, in pre-order: a node's subtree is the nodes
  // up to `skip`; `depth` is its byte string's length; the tokens spelled by exactly that
  // string are trie_tokens()[tokens_begin, tokens_end), those of its whole subtree
  // [tokens_begin, subtree_end). `plain`: read from the node on, every path of the subtree
  // is what a JSON string takes as it is (UTF-8 of code points other than '"', '\\' and
  // controls), possibly ending inside a code point.
  struct TrieNode {
    uint8_t byte;
    bool plain;
    uint32_t depth, skip, tokens_begin, tokens_end, subtree_end;
  };
  // The UTF-8 automaton `plain` follows: state 0 is a code point boundary; the next state
  // after `byte`, or -1 where it is not part of such text.
  static int plain_next(int state, uint8_t byte);
  const std::vector<TrieNode>& trie() const { return trie_; }
  const std::vector<int32_t>& trie_tokens() const { return trie_tokens_; }
  uint32_t max_depth() const { return max_depth_; }

 private:
  std::vector<std::optional<std::string>> bytes_;
  std::vector<int32_t> end_ids_;
  std::vector<uint8_t> is_end_;
  std::vector<TrieNode> trie_;
  std::vector<int32_t> trie_tokens_;
  uint32_t max_depth_ = 0;
};

}  // namespace heron::grammar
