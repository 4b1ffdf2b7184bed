#include "heron/spec/prompt_lookup.h"

#include <algorithm>

#include "heron/core/error.h"

namespace heron::spec {

PromptLookup::PromptLookup(int max_ngram, int min_ngram)
    : max_ngram_(max_ngram), min_ngram_(min_ngram) {
  if (min_ngram < 1 || max_ngram < min_ngram) throw Error("prompt lookup needs 1 <= min <= max n");
}

void PromptLookup::reset(const sample::SamplingOptions& /*sampling*/) {
  sequence_.clear();
}

void PromptLookup::committed(std::span<const int> tokens) {
  sequence_.insert(sequence_.end(), tokens.begin(), tokens.end());
}

Draft PromptLookup::propose(int max) {
  const auto size = static_cast<std::ptrdiff_t>(sequence_.size());
  for (int n = static_cast<int>(std::min<std::ptrdiff_t>(max_ngram_, size - 1)); n >= min_ngram_;
       --n) {
    const auto tail = sequence_.end() - n;
    // The most recent earlier occurrence that has at least one token after it.
    for (std::ptrdiff_t at = size - n - 1; at >= 0; --at) {
      const auto from = sequence_.begin() + at;
      if (!std::equal(from, from + n, tail)) continue;
      const auto begin = from + n;
      const auto end = begin + std::min<std::ptrdiff_t>(max, sequence_.end() - begin);
      return {std::vector<int>(begin, end), std::nullopt};
    }
  }
  return {};
}

}  // namespace heron::spec
