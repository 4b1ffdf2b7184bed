#include "heron/engine/generator.h"

#include <algorithm>

#include <mlx/transforms.h>

#include "heron/core/error.h"
#include "heron/sample/sampler.h"

namespace heron::engine {

namespace mx = mlx::core;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

GenerateStats generate(const model::Model& model, cache::Caches& caches,
                       const std::vector<int>& prompt, const GenerateOptions& options,
                       const std::function<bool(int)>& on_token) {
  const auto& config = model.config();
  const int n = static_cast<int>(prompt.size());
  if (n == 0) throw Error("the prompt is empty");
  if (n >= config.max_position_embeddings) {
    throw Error("the prompt has " + std::to_string(n) +
                " tokens, which does not fit the context length of " +
                std::to_string(config.max_position_embeddings));
  }
  const int budget = std::min(options.max_tokens, config.max_position_embeddings - n);
  sample::Sampler sampler(options.sampling);
  const auto& eos = config.eos_token_ids;
  auto offset = [&] { return caches[0]->offset(); };

  GenerateStats stats;
  stats.prompt_tokens = n;
  const auto start = Clock::now();
  // Prefill all but the last prompt token; the last one seeds the decode loop.
  const int chunk = std::max(1, options.prefill_chunk);
  for (int begin = 0; begin < n - 1; begin += chunk) {
    const int end = std::min(n - 1, begin + chunk);
    std::vector<int> part(prompt.begin() + begin, prompt.begin() + end);
    auto out = model.forward(model::Batch::single(part, offset(), model::LogitsFor::Last), caches);
    mx::eval(out.logits);
  }
  auto step = [&](const mx::array& token) {
    return sampler(model.forward(model::Batch::single(token, offset()), caches).logits);
  };
  auto y = step(mx::array({prompt.back()}));
  mx::async_eval(y);

  Clock::time_point decode_start;
  stats.done_reason = "length";
  for (int i = 0; i < budget; ++i) {
    std::optional<mx::array> next;
    if (i + 1 < budget) {
      next = step(y);
      mx::async_eval(*next);
    }
    const int token = y.item<int32_t>();
    if (i == 0) {
      stats.prompt_seconds = seconds_since(start);
      decode_start = Clock::now();
    }
    ++stats.decode_tokens;
    if (!options.ignore_eos && std::find(eos.begin(), eos.end(), token) != eos.end()) {
      stats.done_reason = "stop";
      break;
    }
    if (!on_token(token)) {
      stats.done_reason = "cancelled";
      break;
    }
    if (!next) break;
    y = *next;
  }
  if (stats.decode_tokens > 0) stats.decode_seconds = seconds_since(decode_start);
  return stats;
}

}  // namespace heron::engine
