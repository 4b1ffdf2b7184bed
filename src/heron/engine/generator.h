#pragma once
// One sequence through the pipeline: attach to the longest cached prefix, prefill the
// rest in chunks, then the decode loop, the only place that emits tokens, asking a
// decoder (plain pipelined, or speculative) for them. Runs on the MLX thread.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "heron/cache/prefix_cache.h"
#include "heron/engine/speculative_decoder.h"
#include "heron/engine/token_step.h"
#include "heron/grammar/matcher.h"
#include "heron/model/model.h"
#include "heron/sample/options.h"

namespace heron::engine {

struct GenerateOptions {
  int max_tokens = 256;  // < 0: until the context is full
  bool ignore_eos = false;
  sample::SamplingOptions sampling;
  sample::LogprobOptions logprobs;
  int context_length = 0;  // 0: the model's trained length; never more than it
  int prefill_chunk = 2048;
  std::function<bool()> cancelled;  // polled between prefill chunks; may be empty
  bool speculate = true;            // with a Speculation given to generate()
  // The output's grammar (structured outputs): every draw is masked to it and generation
  // ends when its value is complete; speculative drafts are cut to it.
  std::optional<grammar::Matcher> grammar;
};

// Speculative decoding for generate(): a drafter and the depth controller, both kept by
// the caller across requests (the controller's tables belong to the model and machine).
struct Speculation {
  spec::Drafter& drafter;
  spec::DepthController& controller;
};

struct GenerateStats {
  int prompt_tokens = 0;      // the whole prompt, cached or not
  int cached_tokens = 0;      // of which were reused from the cache
  double prompt_seconds = 0;  // until the first generated token is known
  int decode_tokens = 0;
  double decode_seconds = 0;  // from the first generated token to the last
  std::string done_reason;    // "stop", "length", "cancelled"
  SpeculationStats speculation;
};

enum class Next { Continue, Stop, Cancel };

// The context length a request gets: `requested` (0: none) capped at the model's.
int effective_context(const model::Model& model, int requested);

// Throws heron::Error for an empty prompt of n tokens or one that does not fit `context`.
void check_prompt(int n, int context);

// The tokens a request with an n-token prompt may generate: max_tokens (< 0: until the
// context is full), never more than the context leaves.
int token_budget(const model::Model& model, int n, const GenerateOptions& options);

// Why generation ends at `token`, counted as generated (null: it goes on): EOS unless
// ignored ("stop"), the callback's stop or cancel (it hears every token but EOS), a
// grammar's whole value ("stop"). The budget is the caller's.
const char* end_reason(const model::Model& model, const GenerateOptions& options,
                       const TokenStep& token,
                       const std::function<Next(const TokenStep&)>& on_token);

// Where a prompt of n tokens leaves restore points in the prefix cache: every 8192 tokens
// and 4 tokens before its end, so a regenerate, or a retry that changes only the end,
// resumes from there.
std::vector<int> restore_points(int n);

// on_token decides whether to go on. Throws heron::Error for an empty prompt or one
// that does not fit the context; after any other failure `cache` is left consistent.
// With `speculation` (and options.speculate), decoding speculates.
GenerateStats generate(const model::Model& model, cache::PrefixCache& cache,
                       const std::vector<int>& prompt, const GenerateOptions& options,
                       const std::function<Next(const TokenStep&)>& on_token,
                       Speculation* speculation = nullptr);

}  // namespace heron::engine
