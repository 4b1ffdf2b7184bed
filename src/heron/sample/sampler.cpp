#include "heron/sample/sampler.h"

#include <cmath>
#include <limits>
#include <random>

#include <mlx/ops.h>
#include <mlx/random.h>

#include "heron/core/error.h"
#include "heron/sample/penalties.h"

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
  if (!std::isfinite(o.min_p) || o.min_p < 0 || o.min_p > 1) throw Error("min_p must be in [0, 1]");
  if (!std::isfinite(o.repeat_penalty) || o.repeat_penalty <= 0) {
    throw Error("repeat_penalty must be a finite number > 0");
  }
  if (o.repeat_last_n < -1) throw Error("repeat_last_n must be >= -1 (-1: the whole context)");
  if (!std::isfinite(o.presence_penalty)) throw Error("presence_penalty must be a finite number");
  if (!std::isfinite(o.frequency_penalty)) throw Error("frequency_penalty must be a finite number");
}

void validate(const LogprobOptions& o) {
  if (o.top < 0 || o.top > LogprobOptions::kMaxTop) {
    throw Error("top_logprobs must be between 0 and " + std::to_string(LogprobOptions::kMaxTop));
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

Sampler::Sampler(const SamplingOptions& options, const LogprobOptions& logprobs)
    : options_(options),
      logprob_options_(logprobs),
      seed_(options.seed ? *options.seed : std::random_device{}()) {
  validate(options_);
  validate(logprob_options_);
}

void Sampler::set_history(const std::vector<int>& tokens) {
  if (!options_.penalties_active()) return;
  const size_t n = options_.repeat_last_n < 0
                       ? tokens.size()
                       : std::min(tokens.size(), static_cast<size_t>(options_.repeat_last_n));
  if (n == 0) {
    history_.reset();
    return;
  }
  std::vector<int32_t> tail(tokens.end() - static_cast<std::ptrdiff_t>(n), tokens.end());
  history_ = mx::array(tail.data(), {1, static_cast<int>(n)}, mx::int32);
}

void Sampler::remember(const mx::array& token) {
  if (!options_.penalties_active()) return;
  auto t = mx::reshape(token, {1, 1});
  history_ = history_ ? mx::concatenate({*history_, t}, 1) : t;
  const int n = history_->shape(1);
  if (options_.repeat_last_n > 0 && n > options_.repeat_last_n) {
    history_ = mx::slice(*history_, {0, n - options_.repeat_last_n}, {1, n});
  }
}

Draw Sampler::sample(const mx::array& logits) {
  // One sequence: [1, V] whatever the model's leading dimensions.
  auto raw = mx::reshape(logits, {1, logits.shape(-1)});
  auto token = draw(mx::astype(raw, mx::float32));
  remember(token);
  Draw out{token, std::nullopt};
  if (logprob_options_.enabled) out.logprobs = compute_logprobs(raw, token, logprob_options_.top);
  return out;
}

mx::array Sampler::draw(mx::array logits) {
  if (options_.penalties_active() && history_)
    logits = apply_penalties(logits, *history_, options_);
  if (options_.temperature == 0.0f) return mx::astype(mx::argmax(logits, -1), mx::int32);
  const auto neg_inf = mx::array(-std::numeric_limits<float>::infinity());
  const int vocab = logits.shape(-1);
  if (options_.top_k > 0 && options_.top_k < vocab) {
    auto kth = mx::min(mx::topk(logits, options_.top_k, -1), -1, /*keepdims=*/true);
    logits = mx::where(mx::less(logits, kth), neg_inf, logits);
  }
  logits = mx::multiply(logits, mx::array(1.0f / options_.temperature));
  auto key = mx::random::key(mix(seed_ ^ mix(step_++)));
  if (options_.top_p >= 1.0f && options_.min_p <= 0.0f) {
    return mx::astype(mx::random::categorical(logits, -1, key), mx::int32);
  }
  // Filter in descending order: the most likely token is always kept by both filters.
  auto order = mx::argsort(mx::negative(logits), -1);
  auto sorted = mx::take_along_axis(logits, order, -1);
  auto probs = mx::softmax(sorted, -1, /*precise=*/true);
  if (options_.top_p < 1.0f) {
    // Nucleus: keep the most likely tokens whose mass before them is below top_p.
    auto mass_before = mx::subtract(mx::cumsum(probs, -1), probs);
    sorted = mx::where(mx::less(mass_before, mx::array(options_.top_p)), sorted, neg_inf);
  }
  if (options_.min_p > 0.0f) {
    auto floor = mx::multiply(mx::slice(probs, {0, 0}, {1, 1}), mx::array(options_.min_p));
    sorted = mx::where(mx::less(probs, floor), neg_inf, sorted);
  }
  auto pick = mx::random::categorical(sorted, -1, key);  // renormalizes what is left
  auto token = mx::take_along_axis(order, mx::expand_dims(pick, -1), -1);
  return mx::astype(mx::squeeze(token, -1), mx::int32);
}

}  // namespace heron::sample
