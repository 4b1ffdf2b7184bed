#pragma once
// Log-probabilities of the raw logits (full-vocabulary log-softmax, before penalties,
// temperature or filters), as lazy device arrays read after the token.
#include <optional>

#include <mlx/array.h>

namespace heron::sample {

struct TokenLogprobs {
  mlx::core::array logprob;                      // float32 [R]: of each row's chosen token
  std::optional<mlx::core::array> top_ids;       // int32 [R, K], most likely first
  std::optional<mlx::core::array> top_logprobs;  // float32 [R, K]
};

// logits [R, V] (any float type); token int32 [R]; top >= 0.
TokenLogprobs compute_logprobs(const mlx::core::array& logits, const mlx::core::array& token,
                               int top);

}  // namespace heron::sample
