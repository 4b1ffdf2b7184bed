#pragma once
// The Unigram model (SentencePiece unigram LM): the segmentation of a piece with the
// highest total score, found by Viterbi over every vocabulary match, as HF `tokenizers`
// computes it (same tie-breaking, unknown characters at min score - 10, consecutive
// unknowns fused, optional "<0xAB>" byte fallback).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "heron/tokenizer/model.h"

namespace heron::tokenizer {

class UnigramModel final : public Model {
 public:
  // vocab: (token, score) in id order. Throws heron::Error when unk_id is out of range.
  UnigramModel(std::vector<std::pair<std::string, double>> vocab, std::optional<int32_t> unk_id,
               bool byte_fallback);
  ~UnigramModel() override;

  void tokenize(std::string_view piece, std::vector<int32_t>& out) const override;
  std::optional<int32_t> token_to_id(std::string_view token) const override;
  const std::string* id_to_token(int32_t id) const override;
  int32_t id_limit() const override { return static_cast<int32_t>(tokens_.size()); }

 private:
  struct Trie;

  std::vector<std::string> tokens_;
  std::vector<double> scores_;
  Vocab vocab_;  // a later duplicate wins, as in HF's map
  std::unique_ptr<Trie> trie_;
  double unk_score_ = 0;
  std::optional<int32_t> unk_id_;
  bool byte_fallback_;
  int32_t fallback_ids_[256];
};

}  // namespace heron::tokenizer
