// The runner's NDJSON stream as the server reads it: arbitrary bytes in arbitrary
// pieces. Every line the reader accepts must be safe for the API formatters.
#include <cstdlib>

#include "heron/server/logprob_format.h"
#include "heron/server/runner_lines.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  heron::server::RunnerLineReader reader;
  // The first byte picks the piece size, so line breaks fall across pieces.
  const size_t piece = size ? 1 + data[0] % 16 : 1;
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  for (size_t at = size ? 1 : 0; at < size; at += piece) {
    for (const auto& line : reader.feed(all.substr(at, piece))) {
      if (line.broken) continue;
      const auto& v = line.value;
      // What CompletionCall and the formatters read: none of it may throw now.
      (void)v.value("content", "");
      (void)v.value("done", false);
      (void)v.value("done_reason", "stop");
      const int total = v.value("prompt_eval_count", 0) + v.value("eval_count", 0);  // usage
      (void)total;
      (void)v.value("cached_tokens", 0);
      if (v.contains("logprobs")) heron::server::client_logprobs(v["logprobs"]);
      if (const auto e = v.find("error"); e != v.end() && e->is_object()) {
        (void)e->value("status", 500);
        (void)e->value("message", std::string());
      }
    }
  }
  return 0;
}
