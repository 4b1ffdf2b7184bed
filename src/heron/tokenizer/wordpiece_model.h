#pragma once
// The WordPiece model (BERT): greedy longest-match-first over the vocabulary, pieces after
// the first spelled with the continuing-subword prefix ("##"); a word with any
// unmatchable part, or longer than max_input_chars_per_word characters, becomes the
// unknown token — exactly as HF `tokenizers` does.
#include <optional>
#include <string>
#include <vector>

#include "heron/tokenizer/model.h"

namespace heron::tokenizer {

struct WordPieceOptions {
  std::string unk_token = "[UNK]";
  std::string continuing_subword_prefix = "##";
  size_t max_input_chars_per_word = 100;
};

class WordPieceModel final : public Model {
 public:
  WordPieceModel(Vocab vocab, WordPieceOptions options);

  // Throws heron::Error when a word needs the unknown token and the vocab lacks it.
  void tokenize(std::string_view piece, std::vector<int32_t>& out) const override;
  std::optional<int32_t> token_to_id(std::string_view token) const override;
  const std::string* id_to_token(int32_t id) const override;
  int32_t id_limit() const override { return static_cast<int32_t>(id_to_token_.size()); }

 private:
  int32_t unk() const;

  Vocab vocab_;
  std::vector<std::string> id_to_token_;
  std::vector<uint8_t> has_token_;
  size_t max_token_len_ = 0;
  std::optional<int32_t> unk_id_;
  WordPieceOptions options_;
};

}  // namespace heron::tokenizer
