#pragma once
// One sequence through the pipeline: prefill in chunks, then a pipelined decode
// loop (step n+1 is dispatched before token n is read). Runs on the MLX thread.
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "heron/model/model.h"
#include "heron/sample/options.h"

namespace heron::engine {

struct GenerateOptions {
  int max_tokens = 256;
  bool ignore_eos = false;
  sample::SamplingOptions sampling;
  int prefill_chunk = 2048;
};

struct GenerateStats {
  int prompt_tokens = 0;
  double prompt_seconds = 0;  // until the first generated token is known
  int decode_tokens = 0;
  double decode_seconds = 0;  // from the first generated token to the last
  std::string done_reason;    // "stop", "length", "cancelled"
};

// on_token returns false to stop (cancellation). Throws heron::Error for an empty
// prompt or one that does not fit the model's context.
GenerateStats generate(const model::Model& model, cache::Caches& caches,
                       const std::vector<int>& prompt, const GenerateOptions& options,
                       const std::function<bool(int)>& on_token);

}  // namespace heron::engine
