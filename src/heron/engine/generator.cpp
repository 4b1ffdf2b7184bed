#include "heron/engine/generator.h"

#include <algorithm>
#include <chrono>

#include <mlx/transforms.h>

#include "heron/core/error.h"
#include "heron/engine/plain_decoder.h"
#include "heron/engine/speculative_decoder.h"
#include "heron/sample/sampler.h"

namespace heron::engine {

namespace mx = mlx::core;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kRestoreInterval = 8192;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

GenerateStats run(const model::Model& model, cache::PrefixCache& cache,
                  const std::vector<int>& prompt, const GenerateOptions& options,
                  const std::function<Next(const TokenStep&)>& on_token, Speculation* speculation) {
  const int n = static_cast<int>(prompt.size());
  const int budget = token_budget(model, n, options);
  sample::Sampler sampler(options.sampling, options.logprobs);
  sampler.set_history(prompt);
  auto& caches = cache.caches();
  auto offset = [&] { return caches[0]->offset(); };

  GenerateStats stats;
  stats.prompt_tokens = n;
  const auto start = Clock::now();
  // Reuse the longest cached prefix, but always evaluate the last prompt token: it seeds
  // the decode loop.
  const int keep = cache.attach(prompt, n - 1);
  stats.cached_tokens = keep;
  // Restore points the prefill crosses join the trie as it goes, so a cancelled prefill
  // keeps them too.
  const auto points = restore_points(n);
  for (auto& c : caches) c->capture_at(points);
  // The drafter hears the prompt first, then (a prediction head) the prefill's hidden states.
  const bool speculating = speculation && options.speculate;
  spec::Drafter* hidden_reader =
      speculating && speculation->drafter.reads_hiddens() ? &speculation->drafter : nullptr;
  if (speculating) {
    speculation->drafter.reset(options.sampling);
    speculation->drafter.committed(prompt);
  }
  auto mark_restore_points = [&] {
    for (int at : points) {
      if (at <= cache.live_length()) cache.mark_restore_point(at, at == n - 4);
    }
  };
  const int chunk = std::max(1, options.prefill_chunk);
  for (int begin = keep; begin < n - 1; begin += chunk) {
    if (options.cancelled && options.cancelled()) {
      mark_restore_points();
      stats.done_reason = "cancelled";
      return stats;
    }
    const int end = std::min(n - 1, begin + chunk);
    std::vector<int> part(prompt.begin() + begin, prompt.begin() + end);
    const int at = offset();
    auto out = model.forward(model::Batch::single(part, at, model::LogitsFor::Last), caches,
                             hidden_reader != nullptr);
    mx::eval(out.logits);
    if (hidden_reader) hidden_reader->target_hiddens(at, *out.hiddens);
    cache.append(part);
  }
  mark_restore_points();
  if (options.cancelled && options.cancelled()) {
    stats.done_reason = "cancelled";
    return stats;
  }
  Sequence sequence{model, cache, sampler, prompt};
  sequence.hidden_reader = hidden_reader;
  std::optional<sample::GrammarMask> grammar;
  if (options.grammar) {
    grammar.emplace(*options.grammar, model.config().vocab_size);
    sequence.grammar = &*grammar;
  }
  PlainDecoder plain(sequence);
  std::optional<SpeculativeDecoder> speculative;
  if (speculating) {
    speculative.emplace(sequence, plain, speculation->drafter, speculation->controller);
  }
  Decoder& decoder = speculative ? static_cast<Decoder&>(*speculative) : plain;

  Clock::time_point decode_start;
  stats.done_reason = "length";
  bool done = false;
  while (!done && stats.decode_tokens < budget) {
    for (const TokenStep& token : decoder.next(budget - stats.decode_tokens)) {
      if (stats.decode_tokens == 0) {
        stats.prompt_seconds = seconds_since(start);
        decode_start = Clock::now();
      }
      ++stats.decode_tokens;
      if (const char* reason = end_reason(model, options, token, on_token)) {
        stats.done_reason = reason;
        done = true;
        break;
      }
    }
  }
  if (speculative) stats.speculation = speculative->stats();
  if (stats.decode_tokens > 0) stats.decode_seconds = seconds_since(decode_start);
  return stats;
}

}  // namespace

int token_budget(const model::Model& model, int n, const GenerateOptions& options) {
  const int room = effective_context(model, options.context_length) - n;
  return options.max_tokens < 0 ? room : std::min(options.max_tokens, room);
}

const char* end_reason(const model::Model& model, const GenerateOptions& options,
                       const TokenStep& token,
                       const std::function<Next(const TokenStep&)>& on_token) {
  const auto& eos = model.config().eos_token_ids;
  if (!options.ignore_eos && std::find(eos.begin(), eos.end(), token.id) != eos.end()) {
    return "stop";
  }
  const Next what = on_token ? on_token(token) : Next::Continue;
  if (what != Next::Continue) return what == Next::Stop ? "stop" : "cancelled";
  if (token.completes) return "stop";  // the value is whole: nothing may follow
  return nullptr;
}

void check_prompt(int n, int context) {
  if (n == 0) throw Error("the prompt is empty");
  if (n >= context) {
    throw Error("the prompt has " + std::to_string(n) +
                " tokens, which does not fit the context length of " + std::to_string(context));
  }
}

int effective_context(const model::Model& model, int requested) {
  const int trained = model.config().max_position_embeddings;
  return requested > 0 ? std::min(requested, trained) : trained;
}

std::vector<int> restore_points(int n) {
  std::vector<int> at;
  for (int p = kRestoreInterval; p < n - 4; p += kRestoreInterval) at.push_back(p);
  if (n > 4) at.push_back(n - 4);
  return at;
}

GenerateStats generate(const model::Model& model, cache::PrefixCache& cache,
                       const std::vector<int>& prompt, const GenerateOptions& options,
                       const std::function<Next(const TokenStep&)>& on_token,
                       Speculation* speculation) {
  check_prompt(static_cast<int>(prompt.size()), effective_context(model, options.context_length));
  try {
    return run(model, cache, prompt, options, on_token, speculation);
  } catch (...) {
    // Lazy cache writes may never have been evaluated: the live path cannot be trusted.
    cache.drop_live();
    throw;
  }
}

}  // namespace heron::engine
