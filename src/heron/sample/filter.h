#pragma once
// The distribution a sampling configuration draws from, for rows of logits: penalties,
// (temperature 0: a point mass on the argmax), top-k, softmax(x/T), top-p, min-p
// (DESIGN.md "Sampling"). Plain decoding and speculative verification both draw through
// it, with one key per generated position, so a point-mass draft is accepted exactly
// when the plain sampler would have drawn it.
#include <cstdint>
#include <optional>
#include <vector>

#include <mlx/array.h>

#include "heron/sample/options.h"

namespace heron::sample {

struct Filtered {
  mlx::core::array logits;                // float32 [R, V]: -inf outside the kept set
  std::optional<mlx::core::array> order;  // int32 [R, V]: the token at each column, when sorted
  bool greedy = false;                    // temperature 0

  // One token per row (int32 [R]), row r drawn with the key of generated position
  // first_position + r.
  mlx::core::array draw(uint64_t seed, uint64_t first_position) const;
  // Probabilities in token order, float32 [R, V] (one-hot rows when greedy).
  mlx::core::array probs() const;
};

// logits float32 [R, V]. windows: int32 [R, n] of each row's penalty history, padded
// with V where a row's history is shorter; required when the penalties are active.
Filtered filter_rows(mlx::core::array logits, const SamplingOptions& options,
                     const std::optional<mlx::core::array>& windows);

// The random key of generated position `position` under `seed` (and a salt, for the
// other draws a position may need).
mlx::core::array position_key(uint64_t seed, uint64_t position, uint64_t salt = 0);

}  // namespace heron::sample
