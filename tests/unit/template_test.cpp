// The chat-template engine against PyPI jinja2 in transformers' environment: every real
// template in tests/fixtures/templates/ with every message list (byte-identical output, or
// an error where jinja2 raised one), the feature snippets that pin Python semantics, and
// the safety limits. Fixtures come from tools/gen_template_refs.py.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "heron/core/error.h"
#include "heron/template/template.h"

namespace {

using heron::chat::RenderOptions;
using heron::chat::Template;
using ojson = nlohmann::ordered_json;
namespace fs = std::filesystem;

const fs::path kDir = fs::path(HERON_FIXTURES) / "templates";

ojson load(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return ojson::parse(text.str());
}

// The generator pins strftime_now to this moment.
RenderOptions fixed_clock() {
  std::tm now{};
  now.tm_year = 2026 - 1900;
  now.tm_mon = 0;
  now.tm_mday = 15;
  now.tm_hour = 10;
  now.tm_min = 30;
  now.tm_sec = 5;
  std::mktime(&now);
  RenderOptions options;
  options.now = now;
  return options;
}

struct Outcome {
  std::string text;
  std::string error;
};

Outcome run(const std::string& source, const ojson& context) {
  Outcome out;
  try {
    out.text = Template::parse(source).render(context, fixed_clock());
  } catch (const heron::Error& e) {
    out.error = e.what();
    if (out.error.empty()) out.error = "(empty error)";
  }
  return out;
}

// Expected: a string, or {"error", "type"} where jinja2 raised. raise_exception's message
// must come through unchanged; other errors only have to be errors.
void check(const ojson& expected, const Outcome& got) {
  if (expected.is_object()) {
    ASSERT_FALSE(got.error.empty()) << "jinja2 raised " << expected["type"] << ": "
                                    << expected["error"] << "\nbut heron rendered:\n"
                                    << got.text;
    if (expected["type"] == "TemplateError") {
      EXPECT_NE(got.error.find(expected["error"].get<std::string>()), std::string::npos)
          << got.error;
    }
    return;
  }
  ASSERT_TRUE(got.error.empty()) << got.error;
  EXPECT_EQ(got.text, expected.get<std::string>());
}

std::vector<std::string> template_fixtures() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(kDir)) {
    const auto name = entry.path().stem().string();
    if (entry.path().extension() == ".json" && name != "cases" && name != "features") {
      names.push_back(name);
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

class RealTemplate : public ::testing::TestWithParam<std::string> {};

TEST_P(RealTemplate, RendersLikeJinja2) {
  static const ojson cases = load(kDir / "cases.json");
  const ojson fixture = load(kDir / (GetParam() + ".json"));
  const auto source = fixture["source"].get<std::string>();
  ASSERT_GE(fixture["expected"].size(), 8u);
  for (const auto& [name, expected] : fixture["expected"].items()) {
    SCOPED_TRACE("case " + name);
    ojson context = cases.at(name);
    context["bos_token"] = fixture["bos_token"];
    context["eos_token"] = fixture["eos_token"];
    check(expected, run(source, context));
  }
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name;
  for (char c : info.param) name.push_back(std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, RealTemplate, ::testing::ValuesIn(template_fixtures()),
                         test_name);

TEST(TemplateFixtures, CoverEnoughTemplates) {
  EXPECT_GE(template_fixtures().size(), 25u);
}

TEST(TemplateFeatures, MatchJinja2) {
  const ojson features = load(kDir / "features.json");
  ASSERT_FALSE(features.empty());
  for (const auto& f : features) {
    SCOPED_TRACE(f["source"].get<std::string>());
    check(f["expected"], run(f["source"].get<std::string>(), f["context"]));
  }
}

// ----------------------------------------------------------------------------- errors

std::string error_of(const std::string& source, const ojson& context = ojson::object(),
                     const RenderOptions& options = {}) {
  try {
    Template::parse(source).render(context, options);
  } catch (const heron::Error& e) {
    return e.what();
  }
  return "";
}

TEST(TemplateErrors, SyntaxErrorsNameLineAndColumn) {
  EXPECT_EQ(error_of("hello\n  {% if x %}\n{{ x }"),
            "chat template syntax error at line 3, column 6: unexpected '}'");
  auto unclosed = error_of("{% for m in messages %}\n{{ m }}");
  EXPECT_NE(unclosed.find("line 2"), std::string::npos) << unclosed;
  EXPECT_NE(unclosed.find("'endfor'"), std::string::npos) << unclosed;
  auto unknown = error_of("a\n\n   {% frobnicate %}");
  EXPECT_NE(unknown.find("line 3, column 7"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("unknown tag 'frobnicate'"), std::string::npos) << unknown;
  EXPECT_NE(error_of("{{ x | nosuchfilter }}").find("No filter named 'nosuchfilter'"),
            std::string::npos);
  EXPECT_NE(error_of("{# never closed").find("Missing end of comment tag"), std::string::npos);
  EXPECT_NE(error_of("{{ 'abc }}").find("syntax error"), std::string::npos);
  const std::string deep = "{{ " + std::string(300, '(') + "1" + std::string(300, ')') + " }}";
  EXPECT_NE(error_of(deep).find("nested too deeply"), std::string::npos);
}

TEST(TemplateErrors, RuntimeErrorsNameLineAndColumn) {
  EXPECT_EQ(error_of("x\n{{ 'a' + 1 }}"),
            "chat template error at line 2, column 8: TypeError: can only concatenate str (not "
            "\"int\") to str");
  EXPECT_EQ(error_of("{{ foo.bar }}"),
            "chat template error at line 1, column 4: UndefinedError: 'foo' is undefined");
  auto unsafe = error_of("{{ messages.append(1) }}", {{"messages", ojson::array()}});
  EXPECT_NE(unsafe.find("SecurityError"), std::string::npos) << unsafe;
  EXPECT_NE(error_of("{% include 'other.jinja' %}").find("cannot include"), std::string::npos);
}

TEST(TemplateErrors, RaiseExceptionKeepsTheMessage) {
  auto e = error_of(
      "{% if messages[0].role != 'user' %}\n"
      "  {{- raise_exception('Conversation must start with a user message') }}\n"
      "{% endif %}",
      {{"messages", {{{"role", "system"}, {"content", "x"}}}}});
  EXPECT_EQ(e,
            "chat template error at line 2, column 7: Conversation must start with a user "
            "message");
}

TEST(TemplateErrors, RunawayRecursionStops) {
  auto e = error_of("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
  EXPECT_NE(e.find("RecursionError"), std::string::npos) << e;
  RenderOptions shallow;
  shallow.max_recursion_depth = 5;
  EXPECT_NE(error_of("{% macro f(n) %}{% if n %}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(10) }}",
                     ojson::object(), shallow)
                .find("RecursionError"),
            std::string::npos);
  EXPECT_EQ(error_of("{% macro f(n) %}{% if n %}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(4) }}",
                     ojson::object(), shallow),
            "");
  // Exponential fan-out is caught by the step budget even within the depth limit.
  auto fan = error_of(
      "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}"
      "{% endmacro %}{{ f(40) }}");
  EXPECT_NE(fan.find("StepLimit"), std::string::npos) << fan;
}

TEST(TemplateErrors, HugeLoopsStop) {
  auto e = error_of(
      "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}"
      "{% endfor %}");
  EXPECT_NE(e.find("StepLimit"), std::string::npos) << e;
  EXPECT_NE(error_of("{% for i in range(1000000) %}{% endfor %}").find("Range too big"),
            std::string::npos);
  RenderOptions small;
  small.max_steps = 10;
  EXPECT_NE(
      error_of("{% for i in range(11) %}{% endfor %}", ojson::object(), small).find("StepLimit"),
      std::string::npos);
  EXPECT_EQ(error_of("{% for i in range(10) %}{% endfor %}", ojson::object(), small), "");
}

TEST(TemplateErrors, OutputSizeIsBounded) {
  RenderOptions small;
  small.max_output_bytes = 1000;
  EXPECT_NE(
      error_of("{% for i in range(200) %}{{ 'xxxxxxxx' }}{% endfor %}", ojson::object(), small)
          .find("OutputLimit"),
      std::string::npos);
  // A lowered print (pieces read from the context) in a loop body or an if branch.
  ojson many = {{"messages", ojson::array()}};
  for (int i = 0; i < 150; ++i)
    many["messages"].push_back({{"role", "user"}, {"content", "0123456789"}});
  for (const char* source : {"{% for m in messages %}\n{{ m['content'] + '|' }}{% endfor %}",
                             "{% for m in messages %}{% if m.role == 'user' %}\n{{ m.content }}"
                             "{% endif %}{% endfor %}"}) {
    const std::string e = error_of(source, many, small);
    EXPECT_NE(e.find("line 2, column 4: OutputLimit"), std::string::npos) << e;  // the print's
    EXPECT_EQ(error_of(source, many), "") << source;
  }
  // Strings built without printing are bounded too (doubling a namespace value).
  auto e = error_of(
      "{% set ns = namespace(s='x') %}{% for i in range(64) %}"
      "{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
      ojson::object(), small);
  EXPECT_NE(e.find("OutputLimit"), std::string::npos) << e;
  EXPECT_NE(error_of("{{ 'x' * 100000000000 }}", ojson::object(), small).find("OutputLimit"),
            std::string::npos);
  EXPECT_NE(error_of("{{ ['x'] * 100000000000 }}", ojson::object(), small).find("OutputLimit"),
            std::string::npos);
}

// Float-to-int conversions with Python's own errors. The messages are what jinja2 raised
// for the same templates with float('inf') / float('nan') in the context (features.json
// cannot carry them: JSON has neither, and jinja2 folds 1e308 * 10 into a NameError).
TEST(TemplateErrors, FloatToIntConversionsRaiseLikePython) {
  const ojson inf = {{"x", INFINITY}}, nan = {{"x", NAN}};
  auto has = [](const std::string& error, const std::string& want) {
    return error.find(want) != std::string::npos;
  };
  EXPECT_PRED2(has, error_of("{{ '%d' % x }}", inf),
               "OverflowError: cannot convert float infinity to integer");
  EXPECT_PRED2(has, error_of("{{ '%i' % x }}", nan),
               "ValueError: cannot convert float NaN to integer");
  EXPECT_PRED2(has, error_of("{{ x|round(1, 'floor') }}", inf),
               "OverflowError: cannot convert float infinity to integer");
  EXPECT_PRED2(has, error_of("{{ x|round(1, 'ceil') }}", nan),
               "ValueError: cannot convert float NaN to integer");
  EXPECT_PRED2(has, error_of("{{ -x|filesizeformat }}", inf),
               "OverflowError: cannot convert float infinity to integer");
  EXPECT_EQ(run("{{ x|round }} {{ x|round(-400) }} {{ x|round(400) }}", inf).text, "inf inf inf");
  EXPECT_PRED2(has, error_of("{{ '%c' % 1114112 }}"),
               "OverflowError: %c arg not in range(0x110000)");
  EXPECT_PRED2(has, error_of("{{ '%*d' % (1e300, 5) }}"), "TypeError: * wants int");
  EXPECT_PRED2(has, error_of("{{ '%.*d' % (4294967301, 5) }}"),
               "OverflowError: Python int too large to convert to C int");
  EXPECT_PRED2(has, error_of("{{ 1.5e308|round(-308) }}"),
               "OverflowError: rounded value too large to represent");
  EXPECT_PRED2(has, error_of("{{ 1.5|round(309, 'floor') }}"),
               "OverflowError: int too large to convert to float");
  EXPECT_PRED2(has, error_of("{{ 1.5|round(-324, 'floor') }}"),
               "ZeroDivisionError: float division by zero");
}

// Where Python's unbounded ints go past int64, heron raises instead of wrapping; where
// CPython itself negates INT64_MIN ('%*d' % (-2**63, 5) gives '5'), the width is refused.
TEST(TemplateErrors, IntegersBeyondInt64AreErrors) {
  EXPECT_NE(error_of("{{ 9000000000000000000|round(-19) }}").find("OverflowError"),
            std::string::npos);  // Python: 10000000000000000000
  EXPECT_NE(error_of("{{ (-9223372036854775807 - 1)|abs }}").find("OverflowError"),
            std::string::npos);  // Python: 9223372036854775808
  RenderOptions small;
  small.max_output_bytes = 1000;
  EXPECT_NE(error_of("{{ '%*d' % (-9223372036854775807 - 1, 5) }}", ojson::object(), small)
                .find("OutputLimit"),
            std::string::npos);
  EXPECT_NE(error_of("{{ '%.999999999d' % 5 }}", ojson::object(), small).find("OutputLimit"),
            std::string::npos);
  EXPECT_NE(error_of("{{ 9223372036854775807|round(-1) }}").find("OverflowError"),
            std::string::npos);  // Python: 9223372036854775810
  EXPECT_EQ(run("{{ -9000000000000000000|round(-18) }} {{ 9223372036854775807|round(-2) }}",
                ojson::object())
                .text,
            "-9000000000000000000 9223372036854775800");
}

TEST(TemplateApi, PlainJsonContextAndReuse) {
  auto t = Template::parse(
      "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
      "{% if add_generation_prompt %}<assistant>{% endif %}");
  nlohmann::json context = {{"messages", {{{"role", "user"}, {"content", "hi"}}}},
                            {"add_generation_prompt", true}};
  EXPECT_EQ(t.render(context), "<user>hi<assistant>");
  context["add_generation_prompt"] = false;
  EXPECT_EQ(t.render(context), "<user>hi");
}

TEST(TemplateApi, StrftimeNowUsesTheClock) {
  EXPECT_EQ(
      Template::parse("{{ strftime_now('%d %b %Y') }}").render(ojson::object(), fixed_clock()),
      "15 Jan 2026");
  EXPECT_FALSE(Template::parse("{{ strftime_now('%Y') }}").render(ojson::object()).empty());
}

}  // namespace
