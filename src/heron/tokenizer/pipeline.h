#pragma once
// The tokenizer.json pipeline: repair UTF-8 -> added tokens -> normalizer ->
// pre-tokenizer -> model (BPE, WordPiece or Unigram) -> post-processor affixes; decoding
// runs the decoder chain. Loaders (tokenizer.json, GGUF) only assemble the parts.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "heron/tokenizer/added_tokens.h"
#include "heron/tokenizer/decoder.h"
#include "heron/tokenizer/model.h"
#include "heron/tokenizer/normalizer.h"
#include "heron/tokenizer/post_processor.h"
#include "heron/tokenizer/pre_tokenizer.h"
#include "heron/tokenizer/tokenizer.h"

namespace heron::tokenizer {

struct PipelineParts {
  std::unique_ptr<Normalizer> normalizer;       // may be null
  std::unique_ptr<PreTokenizer> pre_tokenizer;  // may be null
  std::unique_ptr<Model> model;
  std::vector<AddedToken> added;
  SpecialAffixes affixes;
  Decoder decoder;
  std::optional<int32_t> bos_id, eos_id;
  std::map<std::string, std::string> chat_templates;  // by name; a single one is "default"
};

class PipelineTokenizer final : public Tokenizer {
 public:
  explicit PipelineTokenizer(PipelineParts parts);

  std::vector<int32_t> encode(std::string_view text, bool add_special,
                              bool parse_special) const override;
  std::string decode(std::span<const int32_t> ids, bool skip_special) const override;
  std::string token_bytes(int32_t id) const override;
  const std::string* id_to_token(int32_t id) const override;
  int32_t vocab_size() const override { return static_cast<int32_t>(tokens_.size()); }
  std::optional<int32_t> token_to_id(std::string_view token) const override;
  bool is_special(int32_t id) const override;
  std::unique_ptr<DecodeStream> start_decode() const override { return decoder_.start(); }

 private:
  std::unique_ptr<Normalizer> normalizer_;
  std::unique_ptr<PreTokenizer> pre_tokenizer_;
  std::unique_ptr<Model> model_;
  AddedVocabulary added_;
  SpecialAffixes affixes_;
  Decoder decoder_;
  bool spell_pieces_ = false;               // byte-level pre-tokenizer, character-level model
  std::vector<const std::string*> tokens_;  // per id: its token, or null
  std::vector<uint8_t> special_;            // per id: special added token
};

}  // namespace heron::tokenizer
