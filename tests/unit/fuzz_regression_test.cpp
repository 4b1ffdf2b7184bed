// Inputs the fuzzers (fuzz/) crashed on, replayed through the code they broke; the
// input files and what each found are in tests/fixtures/fuzz/README.md.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "heron/http/http_error.h"
#include "heron/http/json_fields.h"

namespace {

std::string finding(const std::string& target, const std::string& name) {
  std::ifstream in(std::string(HERON_FIXTURES) + "/fuzz/" + target + "/" + name, std::ios::binary);
  EXPECT_TRUE(in) << target << "/" << name;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int status_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const heron::http::HttpError& e) {
    return e.status();
  }
  return 0;
}

}  // namespace

TEST(FuzzRegression, NumberOverflowInABodyIs400) {
  const auto body = finding("api_request", "number-overflow");
  EXPECT_EQ(status_of([&] { heron::http::parse_body(body); }), 400);
  try {
    heron::http::parse_body(R"({"seed": 1e999})");
    ADD_FAILURE() << "no error";
  } catch (const heron::http::HttpError& e) {
    EXPECT_NE(std::string(e.what()).find("invalid JSON in the request body"), std::string::npos);
  }
}
