// Request parsing shared by the runner and the server: keep_alive durations, typed
// JSON fields, Ollama options (names in errors, round trip to the runner).
#include <gtest/gtest.h>

#include "heron/api/generation_params.h"
#include "heron/http/http_error.h"
#include "heron/http/json_fields.h"
#include "heron/server/keep_alive.h"
#include "heron/server/model_footprint.h"

using heron::http::HttpError;
using heron::server::parse_keep_alive;
using json = nlohmann::json;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const HttpError& e) {
    EXPECT_EQ(e.status(), 400);
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(KeepAlive, DurationsNumbersAndForever) {
  using std::chrono::milliseconds;
  EXPECT_EQ(parse_keep_alive(std::string("5m"), "k").duration, milliseconds(300000));
  EXPECT_EQ(parse_keep_alive(std::string("1h30m"), "k").duration, milliseconds(5400000));
  EXPECT_EQ(parse_keep_alive(std::string("300ms"), "k").duration, milliseconds(300));
  EXPECT_EQ(parse_keep_alive(std::string("90"), "k").duration, milliseconds(90000));
  EXPECT_EQ(parse_keep_alive(json(2.5), "k").duration, milliseconds(2500));
  EXPECT_EQ(parse_keep_alive(json(0), "k").duration, milliseconds(0));
  EXPECT_TRUE(parse_keep_alive(json(-1), "k").forever);
  EXPECT_TRUE(parse_keep_alive(std::string("-1m"), "k").forever);
  EXPECT_FALSE(parse_keep_alive(std::string("0"), "k").forever);
  // Past a century it is forever too, never milliseconds that overflow the clock.
  EXPECT_TRUE(parse_keep_alive(json(1e30), "k").forever);
  EXPECT_TRUE(parse_keep_alive(std::string("1e300h1e300h"), "k").forever);
  EXPECT_FALSE(parse_keep_alive(json(50.0 * 365 * 24 * 3600), "k").forever);
}

TEST(KeepAlive, RejectsGarbageNamingTheField) {
  EXPECT_NE(
      error_of([] { parse_keep_alive(std::string("soon"), "keep_alive"); }).find("keep_alive"),
      std::string::npos);
  EXPECT_NE(error_of([] { parse_keep_alive(std::string("5x"), "k"); }), "(no error)");
  EXPECT_NE(error_of([] { parse_keep_alive(std::string(""), "k"); }), "(no error)");
  EXPECT_NE(error_of([] { parse_keep_alive(json::array(), "k"); }), "(no error)");
}

TEST(JsonFields, BodyNestingIsBounded) {
  auto nested = [](int levels) {
    return "{\"a\": " + std::string(static_cast<size_t>(levels), '[') +
           std::string(static_cast<size_t>(levels), ']') + "}";
  };
  EXPECT_EQ(heron::http::parse_body(nested(127))["a"].size(), 1u);
  EXPECT_EQ(error_of([&] { heron::http::parse_body(nested(128)); }),
            "the request body is nested more than 128 levels deep");
  EXPECT_EQ(error_of([&] { heron::http::parse_body(nested(1000000)); }),
            "the request body is nested more than 128 levels deep");
}

TEST(JsonFields, TypesAndRanges) {
  auto body = json::parse(R"({"a": 5, "b": 5.0, "c": 5.5, "d": "x", "e": null, "f": true})");
  EXPECT_EQ(heron::http::get_int(body, "a", "a", 0, 10), 5);
  EXPECT_EQ(heron::http::get_int(body, "b", "b", 0, 10), 5);
  EXPECT_EQ(heron::http::get_int(body, "e", "e", 0, 10), std::nullopt);  // null is absent
  EXPECT_EQ(error_of([&] { heron::http::get_int(body, "c", "opts.c", 0, 10); }),
            "opts.c must be an integer, got number");
  EXPECT_EQ(error_of([&] { heron::http::get_int(body, "a", "a", 0, 4); }),
            "a must be between 0 and 4, got 5");
  EXPECT_EQ(error_of([&] { heron::http::get_number(body, "d", "d", 0, 1); }),
            "d must be a number, got string");
  EXPECT_EQ(error_of([&] { heron::http::get_bool(body, "a", "a"); }),
            "a must be a boolean, got number");
  EXPECT_NE(error_of([] { heron::http::parse_body("{oops"); }).find("invalid JSON"),
            std::string::npos);
  EXPECT_NE(error_of([] { heron::http::parse_body("[1]"); }).find("JSON object"),
            std::string::npos);
}

TEST(GenerationParams, OllamaOptionsRoundTrip) {
  heron::api::GenerationParams p;
  heron::api::read_ollama_options(json::parse(R"({"temperature": 0.5, "top_k": 7, "top_p": 0.8,
      "min_p": 0.1, "repeat_penalty": 1.2, "repeat_last_n": -1, "presence_penalty": 0.3,
      "frequency_penalty": 0.4, "seed": 9, "num_predict": 12, "num_ctx": 99, "stop": "x",
      "unknown_option": 1})"),
                                  "options.", p);
  heron::api::GenerationParams q;
  heron::api::read_ollama_options(heron::api::to_ollama_options(p), "", q);
  EXPECT_EQ(q.sampling.temperature, 0.5f);
  EXPECT_EQ(q.sampling.top_k, 7);
  EXPECT_EQ(q.sampling.min_p, 0.1f);
  EXPECT_EQ(q.sampling.repeat_last_n, -1);
  EXPECT_EQ(q.sampling.frequency_penalty, 0.4f);
  EXPECT_EQ(q.sampling.seed, 9u);
  EXPECT_EQ(q.num_predict, 12);
  EXPECT_EQ(q.num_ctx, 99);
  EXPECT_EQ(q.stop, std::vector<std::string>{"x"});
}

TEST(GenerationParams, BadOptionsNameTheField) {
  heron::api::GenerationParams p;
  auto read = [&](const char* text) {
    return error_of([&] { heron::api::read_ollama_options(json::parse(text), "options.", p); });
  };
  EXPECT_EQ(read(R"({"top_k": -1})"), "options.top_k must be between 0 and 1048576, got -1");
  EXPECT_EQ(read(R"({"top_k": 1048577})"),
            "options.top_k must be between 0 and 1048576, got 1048577");
  EXPECT_EQ(read(R"({"num_predict": 1048577})"),
            "options.num_predict must be between -2 and 1048576, got 1048577");
  EXPECT_EQ(read(R"({"num_ctx": 1048577})"),
            "options.num_ctx must be between 1 and 1048576, got 1048577");
  EXPECT_EQ(read(R"({"top_k": 1048576, "num_predict": 1048576, "num_ctx": 1048576})"),
            "(no error)");
  EXPECT_EQ(read(R"({"temperature": "hot"})"), "options.temperature must be a number, got string");
  EXPECT_NE(read(R"({"num_ctx": 1000000000000})").find("options.num_ctx must be between 1 and"),
            std::string::npos);
  // Integral floats past int64 are out of range, not cast (undefined behaviour).
  EXPECT_EQ(read(R"({"num_ctx": 1e30})"),
            "options.num_ctx must be between 1 and 1048576, got 1e+30");
  EXPECT_EQ(read(R"({"top_k": 1e20})"), "options.top_k must be between 0 and 1048576, got 1e+20");
  EXPECT_EQ(read(R"({"num_predict": -1e300})"),
            "options.num_predict must be between -2 and 1048576, got -1e+300");
  EXPECT_EQ(read(R"({"seed": 9223372036854775808})"),
            "options.seed must be between -9223372036854775808 and 9223372036854775807, got "
            "9223372036854775808");
  EXPECT_EQ(read(R"({"seed": 9.3e18})"),
            "options.seed must be between -9223372036854775808 and 9223372036854775807, got "
            "9.3e+18");
  EXPECT_NE(read(R"({"top_p": 0})").find("options.top_p"), std::string::npos);
  EXPECT_NE(read(R"({"stop": [1]})").find("options.stop"), std::string::npos);
}

TEST(ByteSize, UnitsAndErrors) {
  using heron::server::parse_byte_size;
  EXPECT_EQ(parse_byte_size("1000", "m"), 1000u);
  EXPECT_EQ(parse_byte_size("512MiB", "m"), 512ull << 20);
  EXPECT_EQ(parse_byte_size("1.5g", "m"), 3ull << 29);
  EXPECT_EQ(parse_byte_size("2TB", "m"), 2ull << 40);
  for (const char* bad : {"", "lots", "12XB", "-1G", "0", "nan", "1e300G"}) {
    try {
      parse_byte_size(bad, "$HERON_MAX_MEMORY");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const heron::Error& e) {
      EXPECT_NE(std::string(e.what()).find("$HERON_MAX_MEMORY"), std::string::npos) << e.what();
    }
  }
}
