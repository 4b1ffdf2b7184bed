#pragma once
// Prompt lookup (n-gram) drafting: no weights. The continuation of the most recent
// earlier occurrence of the sequence's last n tokens (the longest n that has one,
// n <= max_ngram) is proposed, as point masses. It pays where the output repeats the
// input (edits, extraction, code); the depth controller turns it off where it does not.
#include <vector>

#include "heron/spec/drafter.h"

namespace heron::spec {

class PromptLookup : public Drafter {
 public:
  static constexpr int kMaxNgram = 3;

  explicit PromptLookup(int max_ngram = kMaxNgram, int min_ngram = 1);
  void reset(const sample::SamplingOptions& sampling) override;
  void committed(std::span<const int> tokens) override;
  Draft propose(int max) override;

 private:
  int max_ngram_, min_ngram_;
  std::vector<int> sequence_;
};

}  // namespace heron::spec
