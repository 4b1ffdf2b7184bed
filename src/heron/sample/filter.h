#pragma once
// The distribution a sampling configuration draws from, for rows of logits: penalties,
// (temperature 0: a point mass on the argmax), top-k, softmax(x/T), top-p, min-p
// (DESIGN.md "Sampling"). Plain decoding and speculative verification both draw through
// it, with one key per generated position (keyed_random.h), so a point-mass draft is
// accepted exactly when the plain sampler would have drawn it.
#include <optional>
#include <vector>

#include <mlx/array.h>

#include "heron/sample/options.h"

namespace heron::sample {

struct Filtered {
  mlx::core::array logits;                // float32 [R, V]: -inf outside the kept set
  std::optional<mlx::core::array> order;  // int32 [R, V]: the token at each column, when sorted
  bool greedy = false;                    // temperature 0

  // One token per row (int32 [R]), row r drawn with keys[r] (keyed_random.h).
  mlx::core::array draw(const mlx::core::array& keys) const;
  // Probabilities in token order, float32 [R, V] (one-hot rows when greedy).
  mlx::core::array probs() const;
};

// logits float32 [R, V]. windows: int32 [R, n] of each row's penalty history, padded
// with V where a row's history is shorter; required when the penalties are active.
Filtered filter_rows(mlx::core::array logits, const SamplingOptions& options,
                     const std::optional<mlx::core::array>& windows);

}  // namespace heron::sample
