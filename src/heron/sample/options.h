#pragma once
#include <cstdint>
#include <optional>

namespace heron::sample {

struct SamplingOptions {
  float temperature = 0.8f;  // 0: greedy
  int top_k = 0;             // 0: off
  float top_p = 1.0f;        // 1: off
  std::optional<uint64_t> seed;
};

// Throws heron::Error naming the field when a value is out of range.
void validate(const SamplingOptions& options);

}  // namespace heron::sample
