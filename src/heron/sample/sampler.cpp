#include "heron/sample/sampler.h"

#include <cmath>
#include <limits>
#include <random>

#include <mlx/ops.h>
#include <mlx/random.h>

#include "heron/core/error.h"

namespace heron::sample {

namespace mx = mlx::core;

void validate(const SamplingOptions& o) {
  if (!std::isfinite(o.temperature) || o.temperature < 0) {
    throw Error("temperature must be a finite number >= 0");
  }
  if (o.top_k < 0) throw Error("top_k must be >= 0");
  if (!std::isfinite(o.top_p) || o.top_p <= 0 || o.top_p > 1) {
    throw Error("top_p must be in (0, 1]");
  }
}

namespace {

// splitmix64: decorrelates (seed, step) pairs into independent key seeds.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

Sampler::Sampler(const SamplingOptions& options)
    : options_(options), seed_(options.seed ? *options.seed : std::random_device{}()) {
  validate(options_);
}

mx::array Sampler::operator()(const mx::array& raw) {
  auto logits = mx::astype(raw, mx::float32);
  if (options_.temperature == 0.0f) return mx::astype(mx::argmax(logits, -1), mx::int32);
  const auto neg_inf = mx::array(-std::numeric_limits<float>::infinity());
  const int vocab = logits.shape(-1);
  if (options_.top_k > 0 && options_.top_k < vocab) {
    auto kth = mx::min(mx::topk(logits, options_.top_k, -1), -1, /*keepdims=*/true);
    logits = mx::where(mx::less(logits, kth), neg_inf, logits);
  }
  logits = mx::multiply(logits, mx::array(1.0f / options_.temperature));
  auto key = mx::random::key(mix(seed_ ^ mix(step_++)));
  if (options_.top_p >= 1.0f) return mx::astype(mx::random::categorical(logits, -1, key), mx::int32);
  // Nucleus: keep the most likely tokens whose mass before them is below top_p.
  auto order = mx::argsort(mx::negative(logits), -1);
  auto sorted = mx::take_along_axis(logits, order, -1);
  auto probs = mx::softmax(sorted, -1);
  auto mass_before = mx::subtract(mx::cumsum(probs, -1), probs);
  sorted = mx::where(mx::less(mass_before, mx::array(options_.top_p)), sorted, neg_inf);
  auto pick = mx::random::categorical(sorted, -1, key);
  auto token = mx::take_along_axis(order, mx::expand_dims(pick, -1), -1);
  return mx::astype(mx::squeeze(token, -1), mx::int32);
}

}  // namespace heron::sample
