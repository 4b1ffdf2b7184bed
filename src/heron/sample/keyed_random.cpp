#include "heron/sample/keyed_random.h"

#include <cmath>
#include <vector>

#include <mlx/ops.h>

namespace heron::sample {

namespace mx = mlx::core;

namespace {

// splitmix64: decorrelates (seed, position) pairs into independent keys.
uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

mx::array u32(uint32_t v) {
  return mx::array(v, mx::uint32);
}

// murmur3's finalizer on uint32 arrays (multiplication wraps modulo 2^32).
mx::array mix32(mx::array h) {
  h = mx::bitwise_xor(h, mx::right_shift(h, u32(16)));
  h = mx::multiply(h, u32(0x85ebca6bU));
  h = mx::bitwise_xor(h, mx::right_shift(h, u32(13)));
  h = mx::multiply(h, u32(0xc2b2ae35U));
  return mx::bitwise_xor(h, mx::right_shift(h, u32(16)));
}

}  // namespace

mx::array position_keys(uint64_t seed, uint64_t first_position, int rows) {
  std::vector<uint32_t> words;
  words.reserve(static_cast<size_t>(rows) * 2);
  for (int r = 0; r < rows; ++r) {
    const uint64_t key = mix64(seed ^ mix64(first_position + static_cast<uint64_t>(r)));
    words.push_back(static_cast<uint32_t>(key));
    words.push_back(static_cast<uint32_t>(key >> 32));
  }
  return mx::array(words.data(), {rows, 2}, mx::uint32);
}

mx::array keyed_uniforms(const mx::array& keys, int columns, uint32_t salt) {
  const int rows = keys.shape(0);
  auto low = mx::slice(keys, {0, 0}, {rows, 1});
  auto high = mx::slice(keys, {0, 1}, {rows, 2});
  auto counter = mx::add(mx::multiply(mx::arange(columns, mx::uint32), u32(0x9e3779b9U)),
                         u32(salt * 0x27d4eb2fU));
  auto h = mix32(mx::bitwise_xor(high, mix32(mx::bitwise_xor(low, mx::reshape(counter, {1, -1})))));
  // The top 24 bits, centred in their interval. The last centre, 1 - 2^-25, rounds to 1 in
  // float32, so it comes back to the largest float below 1: never 0 or 1 (at 1 a Gumbel
  // draw is infinite and would pick a token the filters or a grammar removed).
  auto top = mx::astype(mx::right_shift(h, u32(8)), mx::float32);
  auto u = mx::multiply(mx::add(top, mx::array(0.5f)), mx::array(1.0f / 16777216.0f));
  return mx::minimum(u, mx::array(std::nextafter(1.0f, 0.0f)));
}

mx::array keyed_categorical(const mx::array& logits, const mx::array& keys, uint32_t salt) {
  auto u = keyed_uniforms(keys, logits.shape(1), salt);
  auto gumbel = mx::negative(mx::log(mx::negative(mx::log(u))));
  return mx::astype(mx::argmax(mx::add(logits, gumbel), -1), mx::int32);
}

}  // namespace heron::sample
