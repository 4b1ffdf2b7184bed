#pragma once
// Random numbers keyed by generated position. Each position of a sequence gets a 64-bit
// key from (seed, position) on the host; uniforms come from a counter-based hash of
// (key, column, salt) on the device, so the rows of any number of positions (a verify
// round, a batch of rounds) draw in one vectorized step, and a position draws the same
// numbers whether plain decoding or a speculative round reaches it.
#include <cstdint>

#include <mlx/array.h>

namespace heron::sample {

// The keys of positions first .. first + rows - 1 under seed: uint32 [rows, 2].
mlx::core::array position_keys(uint64_t seed, uint64_t first_position, int rows);

// Uniforms in (0, 1), float32 [R, columns]: row r depends only on keys[r] (uint32 [R, 2])
// and the salt, which separates the independent draws one position may need.
mlx::core::array keyed_uniforms(const mlx::core::array& keys, int columns, uint32_t salt);

// One draw per row from softmax(logits) (float32 [R, V], -inf for excluded tokens) by
// the Gumbel-max trick: int32 [R].
mlx::core::array keyed_categorical(const mlx::core::array& logits, const mlx::core::array& keys,
                                   uint32_t salt);

}  // namespace heron::sample
