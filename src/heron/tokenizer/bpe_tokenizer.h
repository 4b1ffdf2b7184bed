#pragma once
// The byte-level BPE pipeline: repair UTF-8 -> added tokens -> normalizer ->
// pre-tokenizer -> BPE model -> post-processor affixes. Loaders (tokenizer.json, GGUF)
// only assemble the parts.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "heron/tokenizer/added_tokens.h"
#include "heron/tokenizer/bpe_model.h"
#include "heron/tokenizer/decoder.h"
#include "heron/tokenizer/normalizer.h"
#include "heron/tokenizer/post_processor.h"
#include "heron/tokenizer/pre_tokenizer.h"
#include "heron/tokenizer/tokenizer.h"

namespace heron::tokenizer {

struct BpeParts {
  std::unique_ptr<Normalizer> normalizer;       // may be null
  std::unique_ptr<PreTokenizer> pre_tokenizer;  // may be null
  std::unique_ptr<BpeModel> model;
  std::vector<AddedToken> added;
  SpecialAffixes affixes;
  TokenDecoder decoder;
  std::optional<int32_t> bos_id, eos_id;
  std::string chat_template;
};

class BpeTokenizer final : public Tokenizer {
 public:
  explicit BpeTokenizer(BpeParts parts);

  std::vector<int32_t> encode(std::string_view text, bool add_special,
                              bool parse_special) const override;
  std::string decode(std::span<const int32_t> ids, bool skip_special) const override;
  std::string token_bytes(int32_t id) const override;
  int32_t vocab_size() const override { return static_cast<int32_t>(bytes_.size()); }
  std::optional<int32_t> token_to_id(std::string_view token) const override;
  bool is_special(int32_t id) const override;

 private:
  std::unique_ptr<Normalizer> normalizer_;
  std::unique_ptr<PreTokenizer> pre_tokenizer_;
  std::unique_ptr<BpeModel> model_;
  AddedVocabulary added_;
  SpecialAffixes affixes_;
  std::vector<std::string> bytes_;  // per id: the bytes decode() emits
  std::vector<uint8_t> special_;    // per id: special added token
};

}  // namespace heron::tokenizer
