#pragma once
// The BPE model: turns one pre-tokenized piece into token ids by applying merges in rank
// order, exactly as HF `tokenizers` does (same queue order, same stale-entry rule, same
// unknown-symbol handling), with a bounded, thread-safe cache of recent pieces.
//
// Byte-level mode: pieces are raw bytes and the initial symbols are the 256 byte tokens;
// the vocabulary stays spelled in the GPT-2 alphabet and is only spelled/unspelled at
// load and lookup. Otherwise the initial symbols are the piece's UTF-8 characters
// (SentencePiece-style vocabularies, with "<0xAB>" byte fallback).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "heron/tokenizer/model.h"

namespace heron::tokenizer {

struct BpeOptions {
  bool byte_level = true;
  bool ignore_merges = false;  // a piece that is itself a token is not merged
  bool byte_fallback = false;  // a character missing from the vocab becomes "<0xAB>" tokens
  bool fuse_unk = false;       // consecutive unknown characters share one unk token
  std::optional<std::string> unk_token;   // replaces initial symbols missing from the vocab
  std::string continuing_subword_prefix;  // spelled before every non-initial character
  std::string end_of_word_suffix;         // spelled after the final character
  size_t cache_capacity = 10000;          // pieces; 0 disables the cache
};

class BpeModel final : public Model {
 public:
  using Vocab = tokenizer::Vocab;

  // vocab: spelled token -> id. merges: (left, right) in rank order. Throws heron::Error
  // when a merge names a token missing from the vocab or ids are out of range.
  BpeModel(Vocab vocab, const std::vector<std::pair<std::string, std::string>>& merges,
           BpeOptions options);
  ~BpeModel() override;
  BpeModel(const BpeModel&) = delete;
  BpeModel& operator=(const BpeModel&) = delete;

  void tokenize(std::string_view piece, std::vector<int32_t>& out) const override;
  std::optional<int32_t> token_to_id(std::string_view spelled) const override;
  const std::string* id_to_token(int32_t id) const override;
  int32_t id_limit() const override { return static_cast<int32_t>(id_to_token_.size()); }
  bool byte_level() const override { return options_.byte_level; }

 private:
  struct MergeTable;
  struct Cache;
  class SymbolBuilder;

  void merge(std::string_view piece, std::vector<int32_t>& out) const;
  // Initial symbols from characters (non-byte-level mode, or byte-level with affixes).
  void char_symbols(std::string_view text, SymbolBuilder& b) const;

  Vocab vocab_;               // spelled
  size_t max_token_len_ = 0;  // spelled, in bytes (ignore_merges only)
  std::vector<std::string> id_to_token_;
  std::vector<uint8_t> has_token_;
  std::unique_ptr<MergeTable> merges_;
  std::unique_ptr<Cache> cache_;
  int32_t byte_ids_[256];      // byte-level: the byte's token
  int32_t fallback_ids_[256];  // "<0xAB>" tokens, -1 where missing
  bool all_fallback_ = false;  // every "<0xAB>" token exists
  bool plain_bytes_ = false;   // byte-level without affixes: the fast initial-symbol path
  std::optional<int32_t> unk_id_;
  BpeOptions options_;
};

}  // namespace heron::tokenizer
