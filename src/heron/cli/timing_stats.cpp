#include "heron/cli/timing_stats.h"

#include <cstdio>
#include <string>

#include "heron/cli/human_format.h"

namespace heron::cli {

namespace {

int64_t number(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<int64_t>() : 0;
}

void rate(std::ostream& out, const char* label, int64_t count, int64_t nanos) {
  if (nanos <= 0) return;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f tokens/s",
                static_cast<double>(count) * 1e9 / static_cast<double>(nanos));
  out << label << buf << "\n";
}

}  // namespace

void print_timing_stats(std::ostream& out, const nlohmann::json& f) {
  out << "total duration:       " << go_duration(number(f, "total_duration")) << "\n";
  out << "load duration:        " << go_duration(number(f, "load_duration")) << "\n";
  const int64_t prompt_count = number(f, "prompt_eval_count");
  const int64_t prompt_ns = number(f, "prompt_eval_duration");
  out << "prompt eval count:    " << prompt_count << " token(s)\n";
  out << "prompt cached:        " << number(f, "cached_tokens") << " token(s)\n";
  if (prompt_ns > 0) out << "prompt eval duration: " << go_duration(prompt_ns) << "\n";
  rate(out, "prompt eval rate:     ", prompt_count, prompt_ns);
  const int64_t count = number(f, "eval_count");
  const int64_t ns = number(f, "eval_duration");
  out << "eval count:           " << count << " token(s)\n";
  out << "eval duration:        " << go_duration(ns) << "\n";
  rate(out, "eval rate:            ", count, ns);
  if (f.contains("speculation") && f["speculation"].is_object()) {
    const auto& sp = f["speculation"];
    const int64_t rounds = number(sp, "rounds");
    if (rounds > 0) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "%lld rounds, mean depth %.2f, mean accepted %.2f",
                    static_cast<long long>(rounds),
                    static_cast<double>(number(sp, "drafted")) / static_cast<double>(rounds),
                    static_cast<double>(number(sp, "accepted")) / static_cast<double>(rounds));
      out << "speculation:          " << buf << "\n";
    }
  }
}

}  // namespace heron::cli
