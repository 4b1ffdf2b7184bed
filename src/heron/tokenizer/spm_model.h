#pragma once
// llama.cpp's SentencePiece-BPE model (GGUF tokenizer.ggml.model "llama"): start from the
// piece's characters and keep merging the adjacent pair whose concatenation is the
// highest-scoring token (leftmost on ties); characters left outside the vocab become
// "<0xAB>" byte tokens. Reproduces llama.cpp's llm_tokenizer_spm exactly.
#include <optional>
#include <string>
#include <vector>

#include "heron/tokenizer/model.h"

namespace heron::tokenizer {

class SpmModel final : public Model {
 public:
  // tokens and scores in id order (same length). Throws heron::Error otherwise.
  SpmModel(std::vector<std::string> tokens, std::vector<float> scores,
           std::optional<int32_t> unk_id);

  void tokenize(std::string_view piece, std::vector<int32_t>& out) const override;
  std::optional<int32_t> token_to_id(std::string_view token) const override;
  const std::string* id_to_token(int32_t id) const override;
  int32_t id_limit() const override { return static_cast<int32_t>(tokens_.size()); }

 private:
  int32_t lookup(std::string_view text) const;  // -1 when not a token
  void byte_tokens(std::string_view text, std::vector<int32_t>& out) const;

  std::vector<std::string> tokens_;
  std::vector<float> scores_;
  Vocab vocab_;  // a later duplicate wins, as in llama.cpp's map
  int32_t byte_ids_[256];
  std::optional<int32_t> unk_id_;
};

}  // namespace heron::tokenizer
