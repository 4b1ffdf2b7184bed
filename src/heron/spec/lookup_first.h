#pragma once
// Prompt lookup where the text repeats itself, another drafter everywhere else: when
// the sequence's last kMinNgram or more tokens occurred before, their continuation is
// proposed (edits, extraction and code verify long runs of it); otherwise the other
// drafter proposes. Both hear the whole committed stream, so either is ready at any step.
#include "heron/spec/drafter.h"
#include "heron/spec/prompt_lookup.h"

namespace heron::spec {

class LookupFirst : public Drafter {
 public:
  // A shorter match repeats common phrases more often than whole passages.
  static constexpr int kMinNgram = 3;

  explicit LookupFirst(Drafter& otherwise)
      : lookup_(PromptLookup::kMaxNgram, kMinNgram), otherwise_(otherwise) {}
  void reset(const sample::SamplingOptions& sampling) override;
  void committed(std::span<const int> tokens) override;
  Draft propose(int max) override;
  bool reads_hiddens() const override { return otherwise_.reads_hiddens(); }
  void target_hiddens(int first, const mlx::core::array& hiddens) override {
    otherwise_.target_hiddens(first, hiddens);
  }

 private:
  PromptLookup lookup_;
  Drafter& otherwise_;
};

}  // namespace heron::spec
