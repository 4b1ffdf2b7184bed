#pragma once
// The BPE model: turns one pre-tokenized piece into token ids by applying merges in rank
// order, exactly as HF `tokenizers` does (same queue order, same stale-entry rule), with a
// bounded, thread-safe cache of recent pieces.
//
// Byte-level mode: pieces are raw bytes and the initial symbols are the 256 byte tokens;
// the vocabulary stays spelled in the GPT-2 alphabet and is only spelled/unspelled at
// load and lookup. Otherwise the initial symbols are the piece's UTF-8 characters.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace heron::tokenizer {

struct BpeOptions {
  bool byte_level = true;
  bool ignore_merges = false;            // a piece that is itself a token is not merged
  std::optional<std::string> unk_token;  // replaces initial symbols missing from the vocab
  size_t cache_capacity = 10000;         // pieces; 0 disables the cache
};

class BpeModel {
 public:
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  // Token -> id, searchable by string_view.
  using Vocab = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;

  // vocab: spelled token -> id. merges: (left, right) in rank order. Throws heron::Error
  // when a merge names a token missing from the vocab or ids are out of range.
  BpeModel(Vocab vocab, const std::vector<std::pair<std::string, std::string>>& merges,
           BpeOptions options);
  ~BpeModel();
  BpeModel(const BpeModel&) = delete;
  BpeModel& operator=(const BpeModel&) = delete;

  // Appends the ids of one piece (raw bytes in byte-level mode).
  void tokenize(std::string_view piece, std::vector<int32_t>& out) const;

  std::optional<int32_t> token_to_id(std::string_view spelled) const;
  // Spelled token, or nullptr when no token has this id.
  const std::string* id_to_token(int32_t id) const;
  // One past the largest id.
  int32_t id_limit() const { return static_cast<int32_t>(id_to_token_.size()); }
  bool byte_level() const { return options_.byte_level; }

 private:
  struct MergeTable;
  struct Cache;

  void merge(std::string_view piece, std::vector<int32_t>& out) const;

  Vocab vocab_;      // spelled
  Vocab raw_vocab_;  // unspelled (ignore_merges only): lookups without spelling the piece
  size_t max_token_len_ = 0;
  std::vector<std::string> id_to_token_;
  std::vector<uint8_t> has_token_;
  std::unique_ptr<MergeTable> merges_;
  std::unique_ptr<Cache> cache_;
  int32_t byte_ids_[256];
  std::optional<int32_t> unk_id_;
  BpeOptions options_;
};

}  // namespace heron::tokenizer
