// The CLI's number and time formats against the expectations in Ollama's own tests
// (format/bytes_test.go, format/time_test.go) and Go's time.Duration tests.
#include <gtest/gtest.h>

#include <sstream>

#include "heron/cli/human_format.h"
#include "heron/cli/timing_stats.h"

using namespace heron::cli;
using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;

TEST(CliFormat, HumanBytesLikeOllama) {
  const std::pair<int64_t, const char*> cases[] = {
      {0, "0 B"},
      {1, "1 B"},
      {999, "999 B"},
      {1000, "1 KB"},
      {1500, "1.5 KB"},
      {999999, "999 KB"},
      {1000000, "1 MB"},
      {1500000, "1.5 MB"},
      {999999999, "999 MB"},
      {1000000000, "1 GB"},
      {1500000000, "1.5 GB"},
      {999999999999, "999 GB"},
      {1000000000000, "1 TB"},
      {1500000000000, "1.5 TB"},
      {1999999999999, "2.0 TB"},
      {1234, "1.2 KB"},
      {1234567, "1.2 MB"},
      {1234567890, "1.2 GB"},
      {10500, "10.5 KB"},
      {10500000, "10.5 MB"},
      {10500000000, "10.5 GB"},
  };
  for (const auto& [bytes, want] : cases) EXPECT_EQ(human_bytes(bytes), want) << bytes;
}

TEST(CliFormat, HumanTimeLikeOllama) {
  const auto now = std::chrono::system_clock::now();
  EXPECT_EQ(human_time(now + hours(48), now), "2 days from now");
  EXPECT_EQ(human_time(now - hours(48), now), "2 days ago");
  EXPECT_EQ(human_time(now + milliseconds(800), now), "Less than a second from now");
  EXPECT_EQ(human_time(now + hours(24 * 365 * 200), now), "Forever");
  // humanDuration's year boundary cases.
  const std::pair<std::chrono::nanoseconds, const char*> cases[] = {
      {hours(17519) + minutes(20), "24 months"}, {hours(17519) + minutes(30), "2 years"},
      {hours(17519) + minutes(59), "2 years"},   {hours(17520), "2 years"},
      {hours(26279) + minutes(40), "3 years"},   {hours(26280), "3 years"},
  };
  for (const auto& [d, want] : cases) {
    EXPECT_EQ(
        human_time(now - std::chrono::duration_cast<std::chrono::system_clock::duration>(d), now),
        std::string(want) + " ago");
  }
}

TEST(CliFormat, GoDurationStrings) {
  // Go's time_test.go durationTests.
  const std::pair<int64_t, const char*> cases[] = {
      {0, "0s"},
      {1, "1ns"},
      {1100, "1.1µs"},
      {2200 * 1000, "2.2ms"},
      {3300 * 1000000LL, "3.3s"},
      {(4 * 60 + 5) * 1000000000LL, "4m5s"},
      {4 * 60000000000LL + 5001 * 1000000LL, "4m5.001s"},
      {5 * 3600000000000LL + 6 * 60000000000LL + 7001 * 1000000LL, "5h6m7.001s"},
      {8 * 60000000000LL + 1, "8m0.000000001s"},
      {INT64_MAX, "2562047h47m16.854775807s"},
      {INT64_MIN, "-2562047h47m16.854775808s"},
  };
  for (const auto& [ns, want] : cases) EXPECT_EQ(go_duration(ns), want) << ns;
}

TEST(CliFormat, Rfc3339) {
  const auto t = parse_rfc3339("2024-05-06T07:08:09.5Z");
  ASSERT_TRUE(t);
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(t->time_since_epoch()).count(), 1714979289500);
  const auto offset = parse_rfc3339("2024-05-06T09:08:09.500000000+02:00");
  ASSERT_TRUE(offset);
  EXPECT_EQ(*offset, *t);
  for (const char* bad : {"", "2024-05-06", "2024-05-06T07:08:09", "2024-05-06T07:08:09Zx",
                          "2024-05-06T07:08:09+0200", "yesterday"}) {
    EXPECT_FALSE(parse_rfc3339(bad)) << bad;
  }
}

// ollama run --verbose's lines, and heron's speculation line when rounds ran (none without).
TEST(CliFormat, TimingStatsSaySpeculationRounds) {
  nlohmann::json final_line = {
      {"total_duration", 2500000000},
      {"prompt_eval_count", 10},
      {"prompt_eval_duration", 500000000},
      {"eval_count", 64},
      {"eval_duration", 2000000000},
      {"speculation", {{"rounds", 20}, {"drafted", 70}, {"accepted", 45}}}};
  std::ostringstream with;
  print_timing_stats(with, final_line);
  EXPECT_NE(with.str().find("eval rate:            32.00 tokens/s\n"), std::string::npos);
  EXPECT_NE(
      with.str().find("speculation:          20 rounds, mean depth 3.50, mean accepted 2.25\n"),
      std::string::npos)
      << with.str();
  final_line["speculation"]["rounds"] = 0;
  std::ostringstream without;
  print_timing_stats(without, final_line);
  EXPECT_EQ(without.str().find("speculation:"), std::string::npos);
}
