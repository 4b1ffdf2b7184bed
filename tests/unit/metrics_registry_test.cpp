// The metrics registry and its text exposition (Prometheus 0.0.4), and the endpoint label
// serve's request counter uses.
#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>
#include <thread>

#include "heron/metrics/registry.h"
#include "heron/metrics/text_format.h"
#include "heron/server/server_metrics.h"

namespace {

using heron::metrics::Registry;

TEST(MetricsText, EscapesLabelValuesAndHelp) {
  EXPECT_EQ(heron::metrics::escape_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  EXPECT_EQ(heron::metrics::escape_label_value("plain é"), "plain é");
  EXPECT_EQ(heron::metrics::escape_help("say \"x\" \\ y\nz"), "say \"x\" \\\\ y\\nz");
}

TEST(MetricsText, FormatsNumbers) {
  using heron::metrics::format_value;
  EXPECT_EQ(format_value(0), "0");
  EXPECT_EQ(format_value(42), "42");
  EXPECT_EQ(format_value(-3), "-3");
  EXPECT_EQ(format_value(1e15), "1000000000000000");
  EXPECT_EQ(format_value(0.25), "0.25");
  EXPECT_EQ(format_value(0.1), "0.1");
  EXPECT_EQ(format_value(1e300), "1e+300");
  EXPECT_EQ(format_value(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(format_value(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(format_value(std::numeric_limits<double>::quiet_NaN()), "NaN");
}

TEST(MetricsText, ChecksNames) {
  using heron::metrics::valid_label_name;
  using heron::metrics::valid_metric_name;
  EXPECT_TRUE(valid_metric_name("heron_requests_total"));
  EXPECT_TRUE(valid_metric_name("ns:rule_1"));
  EXPECT_FALSE(valid_metric_name(""));
  EXPECT_FALSE(valid_metric_name("1abc"));
  EXPECT_FALSE(valid_metric_name("a-b"));
  EXPECT_TRUE(valid_label_name("endpoint"));
  EXPECT_FALSE(valid_label_name("__name__"));
  EXPECT_FALSE(valid_label_name("a:b"));
  EXPECT_FALSE(valid_label_name("9x"));
}

TEST(MetricsRegistry, RendersCountersWithEscapedLabels) {
  Registry r;
  auto& c = r.counter("x_requests_total", "Requests\nby path", {"path", "status"});
  c.add({"/a", "200"});
  c.add({"/a", "200"}, 2);
  c.add({"say \"hi\"\\", "404"});
  EXPECT_EQ(c.value({"/a", "200"}), 3);
  EXPECT_EQ(c.value({"/b", "200"}), 0);
  EXPECT_EQ(r.render(),
            "# HELP x_requests_total Requests\\nby path\n"
            "# TYPE x_requests_total counter\n"
            "x_requests_total{path=\"/a\",status=\"200\"} 3\n"
            "x_requests_total{path=\"say \\\"hi\\\"\\\\\",status=\"404\"} 1\n");
}

TEST(MetricsRegistry, CountersOnlyGoUp) {
  Registry r;
  auto& c = r.counter("c_total", "c");
  EXPECT_THROW(c.add({}, -1), std::invalid_argument);
  EXPECT_THROW(c.add({}, std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
  c.add({}, 0.5);
  EXPECT_EQ(r.render(), "# HELP c_total c\n# TYPE c_total counter\nc_total 0.5\n");
}

TEST(MetricsRegistry, GaugesSetAddAndReplace) {
  Registry r;
  auto& g = r.gauge("g_bytes", "bytes", {"model"});
  g.set({"a"}, 10);
  g.add({"a"}, -4);
  g.set({"b"}, 1);
  EXPECT_EQ(g.value({"a"}), 6);
  g.replace({{{"c"}, 7}});  // a and b went away
  EXPECT_EQ(r.render(), "# HELP g_bytes bytes\n# TYPE g_bytes gauge\ng_bytes{model=\"c\"} 7\n");
  g.replace({});
  EXPECT_EQ(r.render(), "# HELP g_bytes bytes\n# TYPE g_bytes gauge\n");
}

TEST(MetricsRegistry, HistogramBucketsAreCumulativeWithInclusiveBounds) {
  Registry r;
  auto& h = r.histogram("h_seconds", "latency", {"model"}, {0.25, 1});
  h.observe({"m"}, 0.125);
  h.observe({"m"}, 0.25);  // le is "less than or equal"
  h.observe({"m"}, 0.5);
  h.observe({"m"}, 3);
  EXPECT_EQ(r.render(),
            "# HELP h_seconds latency\n"
            "# TYPE h_seconds histogram\n"
            "h_seconds_bucket{model=\"m\",le=\"0.25\"} 2\n"
            "h_seconds_bucket{model=\"m\",le=\"1\"} 3\n"
            "h_seconds_bucket{model=\"m\",le=\"+Inf\"} 4\n"
            "h_seconds_sum{model=\"m\"} 3.875\n"
            "h_seconds_count{model=\"m\"} 4\n");
}

TEST(MetricsRegistry, RefusesBadDefinitionsAndLabelCounts) {
  Registry r;
  EXPECT_THROW(r.counter("bad-name", "x"), std::invalid_argument);
  EXPECT_THROW(r.gauge("g", "x", {"__reserved"}), std::invalid_argument);
  EXPECT_THROW(r.histogram("h", "x", {}, {1, 1}), std::invalid_argument);
  EXPECT_THROW(r.histogram("h2", "x", {"le"}, {1}), std::invalid_argument);
  auto& c = r.counter("dup_total", "x", {"a"});
  EXPECT_THROW(r.gauge("dup_total", "x"), std::invalid_argument);
  EXPECT_THROW(c.add({}), std::invalid_argument);
  EXPECT_THROW(c.add({"1", "2"}), std::invalid_argument);
}

TEST(MetricsRegistry, FamiliesRenderInRegistrationOrder) {
  Registry r;
  r.gauge("z", "last letter").set({}, 1);
  r.counter("a_total", "first letter").add({});
  const auto text = r.render();
  EXPECT_LT(text.find("# HELP z "), text.find("# HELP a_total "));
}

TEST(MetricsRegistry, ConcurrentRecordingLosesNothing) {
  Registry r;
  auto& c = r.counter("n_total", "n", {"t"});
  auto& h = r.histogram("d", "d", {}, {1});
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        c.add({"x"});
        h.observe({}, 0.5);
        if (i % 1000 == 0) (void)r.render();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(c.value({"x"}), 40000);
  EXPECT_NE(r.render().find("d_count 40000\n"), std::string::npos);
}

TEST(ServerMetrics, EndpointLabelIsARouteOrOther) {
  using heron::server::endpoint_label;
  EXPECT_EQ(endpoint_label("/api/chat"), "/api/chat");
  EXPECT_EQ(endpoint_label("/metrics"), "/metrics");
  EXPECT_EQ(endpoint_label("/v1/models/default"), "/v1/models/{model}");
  EXPECT_EQ(endpoint_label("/api/chat/"), "other");
  EXPECT_EQ(endpoint_label("/v1/embeddings"), "/v1/embeddings");
  EXPECT_EQ(endpoint_label("/api/embed"), "/api/embed");
  EXPECT_EQ(endpoint_label("/v1/embed"), "other");
  EXPECT_EQ(endpoint_label("/wp-admin/../etc/passwd"), "other");
}

TEST(ServerMetrics, FinalLinesBecomeTokenCountersAndSpeeds) {
  heron::server::ServerMetrics m;
  m.completed("smol", {{"done", true},
                       {"done_reason", "length"},
                       {"prompt_eval_count", 30},
                       {"cached_tokens", 20},
                       {"eval_count", 8},
                       {"eval_duration", 400000000},
                       {"speculation", {{"rounds", 3}, {"drafted", 9}, {"accepted", 5}}}});
  m.completed("smol",
              {{"done", true}, {"prompt_eval_count", 5}, {"eval_count", 1}, {"eval_duration", 9}});
  m.first_token("smol", 0.3);
  const auto text = m.render({{"smol", 1000, {{"waiting", 2}, {"cache", {{"memory_bytes", 64}}}}}},
                             /*waiting_for_runner=*/1);
  for (const char* line : {
           "heron_completions_total{model=\"smol\",reason=\"length\"} 1\n",
           "heron_completions_total{model=\"smol\",reason=\"stop\"} 1\n",
           "heron_prompt_tokens_total{model=\"smol\"} 35\n",
           "heron_prompt_cached_tokens_total{model=\"smol\"} 20\n",
           "heron_prefix_cache_hits_total{model=\"smol\"} 1\n",
           "heron_generated_tokens_total{model=\"smol\"} 9\n",
           // 7 tokens after the first in 0.4 s; one token has no decode speed
           "heron_decode_tokens_per_second_bucket{model=\"smol\",le=\"20\"} 1\n",
           "heron_decode_tokens_per_second_bucket{model=\"smol\",le=\"10\"} 0\n",
           "heron_decode_tokens_per_second_count{model=\"smol\"} 1\n",
           "heron_time_to_first_token_seconds_bucket{model=\"smol\",le=\"0.25\"} 0\n",
           "heron_time_to_first_token_seconds_bucket{model=\"smol\",le=\"0.5\"} 1\n",
           "heron_speculation_rounds_total{model=\"smol\"} 3\n",
           "heron_speculation_drafted_tokens_total{model=\"smol\"} 9\n",
           "heron_speculation_accepted_tokens_total{model=\"smol\"} 5\n",
           "heron_loaded_models 1\n",
           "heron_model_memory_bytes{model=\"smol\"} 1000\n",
           "heron_requests_waiting_for_runner 1\n",
           "heron_runner_queue_length{model=\"smol\"} 2\n",
           "heron_prefix_cache_bytes{model=\"smol\",tier=\"memory\"} 64\n",
           "heron_prefix_cache_bytes{model=\"smol\",tier=\"disk\"} 0\n",
       }) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\nin\n" << text;
  }
  // An unloaded model's gauges go with it.
  const auto after = m.render({}, 0);
  EXPECT_NE(after.find("heron_loaded_models 0\n"), std::string::npos);
  EXPECT_EQ(after.find("heron_model_memory_bytes{"), std::string::npos);
}

}  // namespace
