#pragma once
// What `heron serve` measures, in one registry that GET /metrics renders: requests by
// endpoint and status, each completion's timings and token counts (from the runner's final
// line), and at scrape time the loaded models and their runners' queues and prefix caches.
// Handlers and the completion call only record here; metrics_api.cpp serves it.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "heron/metrics/registry.h"
#include "heron/server/runner_pool.h"

namespace heron::server {

class ServerMetrics {
 public:
  ServerMetrics();

  // Every answered request (httplib's logger): the path becomes one of serve's routes or
  // "other", so unknown paths cannot grow the label set.
  void count_request(const std::string& path, int status);
  // The first text (or the final line, when none came before it) of a completion.
  void first_token(const std::string& model, double seconds);
  // A completion's final runner line (done: true).
  void completed(const std::string& model, const nlohmann::json& final_line);

  // Replaces the scrape-time gauges with the pool's loaded models, then renders everything.
  std::string render(const std::vector<RunnerPool::Loaded>& loaded, int waiting_for_runner);

 private:
  metrics::Registry registry_;
  metrics::CounterFamily& requests_;
  metrics::HistogramFamily& ttft_;
  metrics::HistogramFamily& decode_speed_;
  metrics::CounterFamily& completions_;
  metrics::CounterFamily& prompt_tokens_;
  metrics::CounterFamily& cached_tokens_;
  metrics::CounterFamily& cache_hits_;
  metrics::CounterFamily& generated_tokens_;
  metrics::CounterFamily& spec_rounds_;
  metrics::CounterFamily& spec_drafted_;
  metrics::CounterFamily& spec_accepted_;
  metrics::GaugeFamily& loaded_models_;
  metrics::GaugeFamily& model_memory_;
  metrics::GaugeFamily& waiting_for_runner_;
  metrics::GaugeFamily& runner_queue_;
  metrics::GaugeFamily& cache_bytes_;
  metrics::GaugeFamily& cache_entries_;
};

// The endpoint label for a request path.
std::string endpoint_label(const std::string& path);

}  // namespace heron::server
