#pragma once
// tokenizer.json "model" step: turns one pre-tokenized piece into token ids. BPE,
// WordPiece and Unigram implement it; the pipeline does not care which.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace heron::tokenizer {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// Token -> id, searchable by string_view. A flat open-addressing table over one array of
// entries: vocabularies have up to a few hundred thousand short keys, and a node per key
// (std::unordered_map) made loading and lookups cache-miss bound.
class Vocab {
 public:
  using Entry = std::pair<std::string, int32_t>;
  using const_iterator = std::vector<Entry>::const_iterator;

  const_iterator begin() const { return entries_.begin(); }
  const_iterator end() const { return entries_.end(); }
  size_t size() const { return entries_.size(); }
  void reserve(size_t n);
  const_iterator find(std::string_view key) const;
  // Like std::unordered_map: emplace keeps an existing key's id, insert_or_assign replaces it.
  void emplace(std::string key, int32_t id);
  void insert_or_assign(std::string key, int32_t id);

 private:
  struct Slot {
    uint32_t index = 0;  // entry index + 1; 0 = empty
    uint32_t tag = 0;    // high hash bits, to skip most string compares
  };
  // The slot holding `key`, or the empty slot where it would go.
  size_t probe(std::string_view key, size_t hash) const;
  void rehash(size_t slots);

  std::vector<Entry> entries_;
  std::vector<Slot> slots_;
};

class Model {
 public:
  virtual ~Model() = default;
  // Appends the ids of one piece. Byte-level models (byte_level() true) take raw bytes;
  // the others take the piece as the pre-tokenizer left it.
  virtual void tokenize(std::string_view piece, std::vector<int32_t>& out) const = 0;
  virtual std::optional<int32_t> token_to_id(std::string_view token) const = 0;
  // Token as spelled in the vocab, or nullptr when no token has this id.
  virtual const std::string* id_to_token(int32_t id) const = 0;
  // One past the largest id.
  virtual int32_t id_limit() const = 0;
  virtual bool byte_level() const { return false; }
};

// Ids beyond this are treated as a malformed file rather than a reason to allocate.
inline constexpr int64_t kMaxTokenId = int64_t{1} << 24;

// id -> token table of a vocab; throws heron::Error for ids out of range.
std::vector<std::string> invert_vocab(const Vocab& vocab);

struct StreamedModelParts;

// From a tokenizer.json "model" value (model_json.cpp). `byte_level`: the pre-tokenizer
// maps text to GPT-2 byte symbols, so a BPE model can work on raw bytes. `streamed`: the
// vocab / merges json_reader.h took out of `spec` (moved from). Throws heron::Error for
// malformed or unsupported models.
std::unique_ptr<Model> make_model(const nlohmann::json& spec, bool byte_level,
                                  StreamedModelParts* streamed = nullptr);

}  // namespace heron::tokenizer
