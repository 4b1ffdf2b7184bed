#include "heron/sample/sampler.h"

#include <cmath>
#include <limits>
#include <random>

#include <mlx/ops.h>

#include "heron/core/error.h"
#include "heron/sample/filter.h"
#include "heron/sample/keyed_random.h"

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

void Sampler::drew(const mx::array& token) {
  ++position_;
  remember(token);
}

Draw Sampler::sample(const mx::array& logits, const std::optional<mx::array>& allowed) {
  // One sequence: [1, V] whatever the model's leading dimensions.
  auto raw = mx::reshape(logits, {1, logits.shape(-1)});
  auto scores = mx::astype(raw, mx::float32);
  if (allowed) {
    scores = mx::where(*allowed, scores, mx::array(-std::numeric_limits<float>::infinity()));
  }
  auto token = filter_rows(scores, options_, history_).draw(position_keys(seed_, position_, 1));
  drew(token);
  Draw out{token, std::nullopt};
  if (logprob_options_.enabled) out.logprobs = compute_logprobs(raw, token, logprob_options_.top);
  return out;
}

}  // namespace heron::sample
