// Inputs the fuzzers (fuzz/) crashed on, replayed through the code they broke; the
// input files and what each found are in tests/fixtures/fuzz/README.md.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "heron/http/http_error.h"
#include "heron/http/json_fields.h"
#include "heron/server/chat_input.h"
#include "heron/server/openai_request.h"
#include "heron/template/template.h"

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
  // The chat parser reads the body again keeping key order: the same rule there.
  EXPECT_EQ(status_of([&] { heron::server::parse_chat_input(body); }), 400);
  try {
    heron::http::parse_body(R"({"seed": 1e999})");
    ADD_FAILURE() << "no error";
  } catch (const heron::http::HttpError& e) {
    EXPECT_NE(std::string(e.what()).find("invalid JSON in the request body"), std::string::npos);
  }
}

TEST(FuzzRegression, NonStringResponseFormatTypeIs400) {
  // Used to escape as nlohmann's type_error (a 500) from openai_request's reader.
  const auto text = finding("api_request", "response-format-type");
  const auto body = heron::http::parse_body(text);
  struct NoModels : heron::server::ModelResolver {  // the parser, not the lookup, is tested
    heron::server::ResolvedModel resolve(const std::string& name) const override {
      return {name, "/nonexistent"};
    }
    std::vector<heron::server::ResolvedModel> list() const override { return {}; }
  } resolver;
  heron::server::RunnerPool pool({"/nonexistent", 1, 0, std::chrono::seconds(1)});
  const heron::server::ServerContext ctx{pool, resolver, {}};
  try {
    heron::server::parse_openai_request(body, text, ctx, /*legacy=*/false);
    ADD_FAILURE() << "no error";
  } catch (const heron::http::HttpError& e) {
    EXPECT_EQ(e.status(), 400);
    EXPECT_STREQ(e.what(), "response_format.type must be a string, got number");
  }
}

TEST(FuzzRegression, MacroDefinedInALoopRendersLikeJinja2) {
  // A macro defined inside a loop holds the loop's scope, which holds the macro: the
  // cycle leaked every render (LeakSanitizer in the fuzzer and in the sanitizer build).
  // Expected: transformers' _compile_jinja_template(source).render(**context).
  const auto input = finding("jinja_template", "macro-scope-cycle");
  const auto nul = input.find('\0');
  ASSERT_NE(nul, std::string::npos);
  const auto context = nlohmann::ordered_json::parse(input.substr(nul + 1));
  const auto tpl = heron::chat::Template::parse(input.substr(0, nul));
  const std::string iteration = "\nx \n \t\n\t   \na   \nvb\n\ta   \nvb\n\t{{ z }}\n\n\n  \n  ";
  const std::string expected = "\t  " + iteration + "  " + iteration + "b";
  for (int i = 0; i < 3; ++i) EXPECT_EQ(tpl.render(context), expected);
}

TEST(FuzzRegression, SliceInsideATupleSubscriptIsASyntaxError) {
  // `s[-100:,50]` built a tuple key holding a slice without its object, which rendering
  // dereferenced (UBSan: reference binding to null). jinja2 refuses it at compile time
  // (transformers' _compile_jinja_template raises SyntaxError: invalid syntax).
  const auto input = finding("jinja_template", "slice-in-tuple-subscript");
  const auto source = input.substr(0, input.find('\0'));
  for (const auto& src : {source, std::string("{{ s[1:2, 3] }}"), std::string("{{ xs[0, 1:] }}")}) {
    try {
      heron::chat::Template::parse(src);
      ADD_FAILURE() << "no error for " << src;
    } catch (const heron::Error& e) {
      EXPECT_NE(std::string(e.what()).find("invalid syntax: a slice inside a tuple subscript"),
                std::string::npos)
          << e.what();
    }
  }
  // Plain slices and tuple keys without slices still parse.
  EXPECT_EQ(heron::chat::Template::parse("{{ s[1:3] }}").render(nlohmann::json{{"s", "abcd"}}),
            "bc");
  EXPECT_NO_THROW(heron::chat::Template::parse("{{ d[1, 2] }}"));
}

TEST(FuzzRegression, IntOfAFloatBeyond64BitsIsAnError) {
  // `'1111...4.7' | int` cast 1.1e82 to int64 (UBSan: outside the representable range).
  // Python's int() gives a big integer; heron's ints are 64-bit, so it is an error.
  const auto input = finding("jinja_template", "int-of-huge-float");
  const auto context = nlohmann::ordered_json::object();
  for (const auto& src : {input.substr(0, input.find('\0')), std::string("{{ 1e300 | int }}"),
                          std::string("{{ '-9.3e18' | int }}")}) {
    try {
      heron::chat::Template::parse(src).render(context);
      ADD_FAILURE() << "no error for " << src;
    } catch (const heron::Error& e) {
      EXPECT_NE(std::string(e.what()).find("does not fit a 64-bit integer"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(heron::chat::Template::parse("{{ '9.2e18' | int }} {{ -3.9 | int }}").render(context),
            "9200000000000000000 -3");
}

TEST(FuzzRegression, UnknownFloatFormatCodeIsAnError) {
  // `{:.2j}` reached snprintf as "%.2j" (ASan's printf check failed; UB in printf).
  // Python: ValueError: Unknown format code 'j' for object of type 'float'.
  const auto context = nlohmann::ordered_json::object();
  try {
    heron::chat::Template::parse("{{ '{:.2j}'.format(1.5) }}").render(context);
    ADD_FAILURE() << "no error";
  } catch (const heron::Error& e) {
    EXPECT_NE(std::string(e.what()).find("Unknown format code 'j' for object of type 'float'"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(heron::chat::Template::parse("{{ '{:.2f}'.format(1.5) }}").render(context), "1.50");
  EXPECT_FALSE(finding("jinja_template", "float-format-code").empty());
}
