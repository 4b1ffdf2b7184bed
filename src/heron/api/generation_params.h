#pragma once
// What one completion asks of the runner, independent of the API it came through.
// The server fills it from Ollama or OpenAI fields, sends it to the runner as Ollama
// option names, and the runner reads it back with the same code.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "heron/sample/options.h"

namespace heron::api {

struct GenerationParams {
  int num_predict = -1;  // < 0: until the context is full
  int num_ctx = 0;       // 0: the runner's default
  sample::SamplingOptions sampling;
  sample::LogprobOptions logprobs;
  std::vector<std::string> stop;
  bool speculation = true;  // false: this request decodes without speculation
  // Structured output: "" (free text), "json" (any JSON object) or a JSON schema's text,
  // its keys in the client's order (properties are written in that order). Sent to the
  // runner beside the options.
  std::string format;
};

// Largest num_ctx a request may ask for; anything above it is a typo, not a wish.
constexpr int kMaxNumCtx = 1 << 20;
// No completion outlives its context, so neither may the token budget.
constexpr int kMaxNumPredict = kMaxNumCtx;
// Above any vocabulary's size (the largest are ~256k); larger is a typo.
constexpr int kMaxTopK = 1 << 20;

// Reads Ollama's option names (temperature, top_k, ..., stop, num_predict, num_ctx)
// from `options` into `p`, validating each; error messages say `prefix` + name
// ("options.top_k"). Unknown names are ignored, as Ollama does.
void read_ollama_options(const nlohmann::json& options, const std::string& prefix,
                         GenerationParams& p);
// Every field of `p` under Ollama's names (logprobs as "logprobs"/"top_logprobs").
nlohmann::json to_ollama_options(const GenerationParams& p);

}  // namespace heron::api
