#pragma once
#include <cstdint>
#include <optional>

namespace heron::sample {

// Defaults leave every filter and penalty off; API layers apply their own defaults.
struct SamplingOptions {
  float temperature = 0.8f;        // 0: greedy
  int top_k = 0;                   // 0: off
  float top_p = 1.0f;              // 1: off
  float min_p = 0.0f;              // 0: off; keeps tokens with p >= min_p * p_max
  float repeat_penalty = 1.0f;     // 1: off; CTRL-style divide/multiply of seen tokens' logits
  int repeat_last_n = 64;          // penalty window: 0 off, -1 the whole context
  float presence_penalty = 0.0f;   // subtracted once from every seen token's logit
  float frequency_penalty = 0.0f;  // subtracted per occurrence
  std::optional<uint64_t> seed;

  bool penalties_active() const {
    return repeat_last_n != 0 &&
           (repeat_penalty != 1.0f || presence_penalty != 0.0f || frequency_penalty != 0.0f);
  }
};

// Logprobs of the raw (unmodified) logits, computed only when asked.
struct LogprobOptions {
  bool enabled = false;
  int top = 0;  // how many alternatives per position, most likely first
  static constexpr int kMaxTop = 20;
};

// Throw heron::Error naming the field when a value is out of range.
void validate(const SamplingOptions& options);
void validate(const LogprobOptions& options);

}  // namespace heron::sample
