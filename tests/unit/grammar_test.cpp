// grammar/: JSON schema -> grammar -> per-token masks. Byte strings are checked against
// each schema feature (valid and invalid), masks on Qwen3's real vocabulary against a
// brute-force check of every token, and random walks over allowed tokens must end in JSON
// of the schema's shape.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "heron/core/error.h"
#include "heron/grammar/json_schema.h"
#include "heron/grammar/matcher.h"
#include "heron/grammar/vocabulary.h"
#include "tokenizer_test_util.h"

namespace {

using namespace heron::grammar;
using nlohmann::json;
using nlohmann::ordered_json;

// Every single byte as a token, and an end token (id 256).
std::shared_ptr<const Vocabulary> byte_vocab() {
  static const auto v = [] {
    std::vector<std::optional<std::string>> bytes;
    for (int b = 0; b < 256; ++b) bytes.emplace_back(std::string(1, static_cast<char>(b)));
    bytes.emplace_back(std::nullopt);
    return std::make_shared<const Vocabulary>(std::move(bytes), std::vector<int32_t>{256});
  }();
  return v;
}

Matcher matcher(const std::string& schema) {
  return Matcher(compile_json_schema(ordered_json::parse(schema)), byte_vocab());
}

// `text` is a complete value of `schema`.
bool valid(const std::string& schema, const std::string& text) {
  Matcher m = matcher(schema);
  return m.accept_bytes(text) && m.accepting();
}

// `text` can still be continued into a value of `schema`.
bool prefix(const std::string& schema, const std::string& text) {
  return matcher(schema).accept_bytes(text);
}

std::string error_of(const std::string& schema) {
  try {
    compile_json_schema(ordered_json::parse(schema));
  } catch (const heron::Error& e) {
    return e.what();
  }
  return "";
}

TEST(GrammarSchema, ScalarTypes) {
  EXPECT_TRUE(valid(R"({"type":"string"})", R"("hi")"));
  EXPECT_FALSE(valid(R"({"type":"string"})", "12"));
  EXPECT_TRUE(valid(R"({"type":"integer"})", "-120"));
  EXPECT_FALSE(valid(R"({"type":"integer"})", "1.5"));
  EXPECT_FALSE(prefix(R"({"type":"integer"})", "01"));
  EXPECT_FALSE(prefix(R"({"type":"integer"})", "-01"));
  EXPECT_TRUE(valid(R"({"type":"number"})", "-1.25e-7"));
  EXPECT_TRUE(valid(R"({"type":"number"})", "0.5E+12"));
  EXPECT_FALSE(prefix(R"({"type":"number"})", "1e123"));  // exponents: 2 digits
  EXPECT_FALSE(prefix(R"({"type":"number"})", ".5"));
  EXPECT_TRUE(valid(R"({"type":"boolean"})", "false"));
  EXPECT_TRUE(valid(R"({"type":"null"})", "null"));
  EXPECT_FALSE(valid(R"({"type":"null"})", "nul"));
  EXPECT_TRUE(valid(R"({"type":["string","null"]})", "null"));
  EXPECT_TRUE(valid(R"({"type":["string","null"]})", R"("x")"));
  EXPECT_FALSE(valid(R"({"type":["string","null"]})", "1"));
  EXPECT_TRUE(valid("{}", R"({"a":[1,{"b":null}],"c":"d"})"));
  EXPECT_TRUE(valid("true", "[true]"));
  // 17 digits never: a model cannot loop on digits forever.
  EXPECT_TRUE(valid(R"({"type":"integer"})", "1234567890123456"));
  EXPECT_FALSE(prefix(R"({"type":"integer"})", "12345678901234567"));
}

TEST(GrammarSchema, StringsAreValidJsonUtf8) {
  const std::string s = R"({"type":"string"})";
  EXPECT_TRUE(valid(s, "\"caf\xC3\xA9 \xF0\x9F\x98\x80\""));
  EXPECT_TRUE(valid(s, R"("a\"b\\c\n\u00e9")"));
  EXPECT_FALSE(prefix(s, "\"\xC3\x28"));      // bad continuation byte
  EXPECT_FALSE(prefix(s, "\"\xED\xA0\x80"));  // a surrogate in UTF-8
  EXPECT_FALSE(prefix(s, "\"\xC0\xAF"));      // overlong
  EXPECT_FALSE(prefix(s, "\"\xF4\x90"));      // past U+10FFFF
  EXPECT_FALSE(prefix(s, "\"a\nb"));          // raw control
  EXPECT_FALSE(prefix(s, R"("\q)"));
  EXPECT_FALSE(prefix(s, R"("\ud800)"));  // lone surrogate escapes never
  EXPECT_TRUE(prefix(s, "\"\xE2"));       // a byte-fallback token's partial code point
}

TEST(GrammarSchema, StringLengthCountsCodePoints) {
  const std::string s = R"({"type":"string","minLength":2,"maxLength":3})";
  EXPECT_FALSE(valid(s, R"("a")"));
  EXPECT_TRUE(valid(s, "\"\xC3\xA9\xC3\xA9\""));
  EXPECT_TRUE(valid(s, R"("a\nb")"));
  EXPECT_FALSE(prefix(s, R"("abcd)"));
}

TEST(GrammarSchema, IntegerBoundsAreExact) {
  const std::string s = R"({"type":"integer","minimum":-15,"maximum":123})";
  const std::string x = R"({"type":"integer","exclusiveMinimum":7,"exclusiveMaximum":1000})";
  Matcher ms = matcher(s), mx = matcher(x);
  for (int v = -1200; v <= 1200; ++v) {
    const std::string t = std::to_string(v);
    Matcher a = ms, b = mx;
    EXPECT_EQ(a.accept_bytes(t) && a.accepting(), v >= -15 && v <= 123) << t;
    EXPECT_EQ(b.accept_bytes(t) && b.accepting(), v > 7 && v < 1000) << t;
  }
  const std::string big = R"({"type":"integer","minimum":98765,"maximum":1234567})";
  for (long long v :
       {98764LL, 98765LL, 99999LL, 100000LL, 999999LL, 1234567LL, 1234568LL, 1300000LL, 5LL})
    EXPECT_EQ(valid(big, std::to_string(v)), v >= 98765 && v <= 1234567) << v;
  EXPECT_TRUE(valid(R"({"type":"integer","minimum":0})", "9999999999999999"));
  EXPECT_FALSE(prefix(R"({"type":"integer","minimum":0})", "-"));
  EXPECT_FALSE(valid(R"({"type":"integer","maximum":-3})", "-2"));
  EXPECT_TRUE(valid(R"({"type":"integer","maximum":-3})", "-3000"));
  EXPECT_TRUE(valid(R"({"type":"integer","minimum":1.5,"maximum":2.5})", "2"));
  EXPECT_NE(error_of(R"({"type":"integer","minimum":1.2,"maximum":1.8})").find("no integer"),
            std::string::npos);
}

TEST(GrammarSchema, NumberBoundsNeverEmitOutOfRange) {
  const std::string s = R"({"type":"number","minimum":-2.5,"exclusiveMaximum":10})";
  for (const char* t : {"-2", "0", "9", "9.999", "-1.5", "-0.25", "3.75"})
    EXPECT_TRUE(valid(s, t)) << t;
  for (const char* t : {"10", "10.5", "-3", "-2.75", "1e2", "-2.6"}) EXPECT_FALSE(valid(s, t)) << t;
  EXPECT_FALSE(valid(s, "9.9999999999999999"));  // a double reads 10
  EXPECT_TRUE(valid(s, "9.99999999999999"));
  // Walk every accepted short value: each lies in the bounds.
  Matcher m = matcher(s);
  for (int ip = -20; ip <= 20; ++ip)
    for (int f = 0; f < 100; f += 7) {
      const std::string t = std::to_string(ip) + "." + std::to_string(f);
      Matcher c = m;
      if (c.accept_bytes(t) && c.accepting()) {
        const double v = std::stod(t);
        EXPECT_TRUE(v >= -2.5 && v < 10) << t;
      }
    }
}

TEST(GrammarSchema, ObjectsRequiredOptionalAndOrder) {
  const std::string s = R"({"type":"object","properties":{"b":{"type":"integer"},
    "a":{"type":"string"},"c":{"type":"boolean"}},"required":["b","c"]})";
  EXPECT_TRUE(valid(s, R"({"b":1,"a":"x","c":true})"));
  EXPECT_TRUE(valid(s, R"({"b":1,"c":true})"));
  EXPECT_TRUE(valid(s, "{ \"b\" : 1 ,\n  \"c\":false }"));
  EXPECT_FALSE(valid(s, R"({"b":1,"a":"x"})"));  // c missing: cannot complete
  EXPECT_FALSE(prefix(s, R"({"b":1,"a":"x"})"));
  EXPECT_FALSE(prefix(s, R"({"a")"));                // schema order: b first
  EXPECT_FALSE(prefix(s, R"({"b":1,"d")"));          // additionalProperties absent = false
  EXPECT_FALSE(prefix(s, R"({"b":1,"b")"));          // no repeats
  EXPECT_FALSE(prefix(s, "{\"b\":1,\"c\":true} "));  // nothing after the root
  Matcher m = matcher(s);
  ASSERT_TRUE(m.accept_bytes(R"({"b":1,"c":true})"));
  EXPECT_TRUE(m.accepting());
  EXPECT_TRUE(m.complete());
  Matcher n = matcher(s);
  ASSERT_TRUE(n.accept_bytes(R"({"b":1,"c":true)"));
  EXPECT_FALSE(n.accepting());
  EXPECT_FALSE(n.complete());
  Matcher i = matcher(R"({"type":"integer"})");
  ASSERT_TRUE(i.accept_bytes("12"));
  EXPECT_TRUE(i.accepting());
  EXPECT_FALSE(i.complete());  // more digits may follow
}

TEST(GrammarSchema, AdditionalProperties) {
  const std::string f = R"({"properties":{"a":{"type":"integer"}},"additionalProperties":false})";
  EXPECT_FALSE(prefix(f, R"({"b")"));
  EXPECT_TRUE(valid(f, "{}"));
  const std::string t = R"({"properties":{"ab":{"type":"integer"}},
    "additionalProperties":{"type":"string"}})";
  EXPECT_TRUE(valid(t, R"({"ab":1,"x":"y","a":"z","abc":"w"})"));
  EXPECT_TRUE(valid(t, R"({"a":"z"})"));
  EXPECT_FALSE(valid(t, R"({"x":1})"));
  EXPECT_FALSE(prefix(t, R"({"ab":1,"ab")"));  // an extra key never takes a listed name
  EXPECT_FALSE(prefix(t, R"({"ab":"s")"));
  EXPECT_TRUE(valid(R"({"type":"object","additionalProperties":true})", R"({"k":[1]})"));
  EXPECT_TRUE(valid(R"({"type":"object"})", R"({"k":{"j":null}})"));
}

TEST(GrammarSchema, EnumConstAnyOfRef) {
  EXPECT_TRUE(valid(R"({"enum":["red",1,null,{"a":[true]}]})", R"({"a":[true]})"));
  EXPECT_FALSE(valid(R"({"enum":["red",1,null]})", R"("blue")"));
  EXPECT_TRUE(valid(R"({"const":"x\ny"})", R"("x\ny")"));
  json many = json::array();  // 20000 values sharing prefixes: one stack, not 20000
  for (int i = 0; i < 20000; ++i) many.push_back("item-" + std::to_string(i));
  many.push_back("item");
  const std::string big = json{{"enum", many}}.dump();
  EXPECT_TRUE(valid(big, R"("item-19999")"));
  EXPECT_TRUE(valid(big, R"("item")"));
  EXPECT_TRUE(valid(big, R"("item-7")"));
  EXPECT_FALSE(valid(big, R"("item-20000")"));
  EXPECT_FALSE(valid(big, R"("item-")"));
  const std::string any = R"({"anyOf":[{"type":"integer"},{"type":"string","maxLength":1}]})";
  EXPECT_TRUE(valid(any, "5"));
  EXPECT_TRUE(valid(any, R"("a")"));
  EXPECT_FALSE(valid(any, R"("ab")"));
  EXPECT_TRUE(valid(R"({"oneOf":[{"type":"null"},{"type":"boolean"}]})", "true"));
  EXPECT_TRUE(valid(R"({"allOf":[{"type":"null"}]})", "null"));
  const std::string tree = R"({"$ref":"#/$defs/node","$defs":{"node":{"type":"object",
    "properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}},
    "required":["v"]}}})";
  EXPECT_TRUE(valid(tree, R"({"v":1,"kids":[{"v":2},{"v":3,"kids":[{"v":4,"kids":[]}]}]})"));
  EXPECT_FALSE(valid(tree, R"({"v":1,"kids":[{"kids":[]}]})"));
  const std::string list = R"({"type":"object","properties":{"next":{"anyOf":[{"$ref":"#"},
    {"type":"null"}]}},"required":["next"]})";
  EXPECT_TRUE(valid(list, R"({"next":{"next":{"next":null}}})"));
  EXPECT_TRUE(valid(R"({"definitions":{"x":{"type":"integer"}},"$ref":"#/definitions/x"})", "4"));
}

TEST(GrammarSchema, Arrays) {
  const std::string s = R"({"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":3})";
  EXPECT_FALSE(valid(s, "[1]"));
  EXPECT_TRUE(valid(s, "[1, 2]"));
  EXPECT_TRUE(valid(s, "[1,2,3]"));
  EXPECT_FALSE(prefix(s, "[1,2,3,"));
  EXPECT_FALSE(prefix(s, "[\"a\""));
  const std::string t = R"({"prefixItems":[{"type":"string"},{"type":"integer"}],"items":false})";
  EXPECT_TRUE(valid(t, R"(["a",1])"));
  EXPECT_TRUE(valid(t, R"(["a"])"));
  EXPECT_FALSE(prefix(t, R"(["a",1,)"));
  EXPECT_FALSE(prefix(t, "[1"));
  const std::string u =
      R"({"prefixItems":[{"type":"string"}],"items":{"type":"null"},"minItems":3})";
  EXPECT_TRUE(valid(u, R"(["a",null,null,null])"));
  EXPECT_FALSE(valid(u, R"(["a",null])"));
  EXPECT_TRUE(valid(R"({"type":"array"})", "[]"));
  EXPECT_TRUE(valid(R"({"type":"array"})", R"([1,"x",[{}]])"));
}

TEST(GrammarSchema, Patterns) {
  const std::string s = R"({"type":"string","pattern":"^[a-z]+\\d{2}$"})";
  EXPECT_TRUE(valid(s, R"("abc12")"));
  EXPECT_FALSE(valid(s, R"("abc1")"));
  EXPECT_FALSE(prefix(s, R"("A)"));
  EXPECT_FALSE(prefix(s, R"("ab12x)"));
  const std::string u = R"({"pattern":"ab+c"})";  // search: anything around it
  EXPECT_TRUE(valid(u, R"("xxabbbcyy")"));
  EXPECT_FALSE(valid(u, R"("xxacyy")"));
  const std::string g = R"({"pattern":"^(?:cat|dog)s?(-[0-9]{1,3})*$"})";
  EXPECT_TRUE(valid(g, R"("dogs-1-234")"));
  EXPECT_FALSE(valid(g, R"("cow")"));
  EXPECT_FALSE(prefix(g, R"("cat-1234)"));
  const std::string n = R"({"pattern":"^[^a-c\"]\\.\\w$"})";
  EXPECT_TRUE(valid(n, R"("x._")"));
  EXPECT_FALSE(prefix(n, R"("b)"));
  EXPECT_FALSE(prefix(n, R"("\")"));
  const std::string q = R"({"pattern":"^\"\\\\.$"})";  // a quote, a backslash, any char
  EXPECT_TRUE(valid(q, R"("\"\\x")"));
  EXPECT_NE(error_of(R"j({"pattern":"a(?=b)"})j").find("unsupported pattern"), std::string::npos);
  EXPECT_NE(error_of(R"({"pattern":"(a"})").find("unbalanced"), std::string::npos);
  EXPECT_NE(error_of(R"({"pattern":"a^b"})").find("anchors"), std::string::npos);
  EXPECT_TRUE(valid(R"({"pattern":"^a{b}$"})", R"("a{b}")"));  // '{' without a count: literal
  EXPECT_NE(error_of(R"j({"pattern":"(a*)*"})j").find("left-recursive"), std::string::npos);
}

// Random byte walks (the byte vocabulary) until the value ends: no step may dead-end, and
// every finished value must pass `check`. `closer` is picked often so that walks end.
void byte_walks(const std::string& schema, char closer,
                const std::function<bool(const std::string&)>& check) {
  std::mt19937 rng(99);
  Matcher base = matcher(schema);
  for (int walk = 0; walk < 30; ++walk) {
    Matcher m = base;
    std::string text;
    for (int steps = 0; steps < 4000 && !m.complete(); ++steps) {
      const auto mask = m.allowed();
      if (mask->allowed[256] && rng() % 4 == 0) break;
      std::vector<int32_t> ids;
      if (mask->allowed[static_cast<uint8_t>(closer)] && rng() % 8 == 0)
        ids.push_back(static_cast<uint8_t>(closer));
      for (int32_t id = 0; id < 256 && ids.empty(); ++id)
        if (mask->allowed[id]) ids.push_back(id);
      if (ids.size() > 1)
        ids = {ids[std::uniform_int_distribution<size_t>(0, ids.size() - 1)(rng)]};
      if (ids.empty()) {
        ASSERT_TRUE(mask->allowed[256]) << schema << " dead-ends after " << text;
        break;
      }
      ASSERT_TRUE(m.accept(ids[0]));
      text += static_cast<char>(ids[0]);
    }
    ASSERT_TRUE(m.accepting()) << schema << " did not finish: " << text;
    json j;
    ASSERT_NO_THROW(j = json::parse(text)) << text;
    EXPECT_TRUE(check(text)) << schema << "\n" << text;
  }
}

// Code points of a JSON string value.
size_t code_points(const std::string& json_text) {
  const std::string s = json::parse(json_text).get<std::string>();
  return static_cast<size_t>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<uint8_t>(c) & 0xC0) != 0x80; }));
}

TEST(GrammarSchema, PatternWithLengths) {
  const std::string sql =
      R"({"type":"string","pattern":"^(SELECT|WITH|INSERT|UPDATE|DELETE)\\s[^;]*$","maxLength":400})";
  EXPECT_TRUE(valid(sql, R"("SELECT a FROM b")"));
  EXPECT_TRUE(valid(sql, R"("WITH\tx")"));
  EXPECT_FALSE(prefix(sql, R"("SELECT a;)"));
  EXPECT_FALSE(valid(sql, R"("SELECT a; DROP")"));
  EXPECT_FALSE(prefix(sql, R"("DROP)"));
  EXPECT_FALSE(valid(sql, R"("SELECT")"));
  EXPECT_TRUE(valid(sql, "\"SELECT " + std::string(393, 'x') + "\""));     // 400 characters
  EXPECT_FALSE(prefix(sql, "\"SELECT " + std::string(394, 'x')));          // 401
  EXPECT_TRUE(valid(sql, "\"SELECT " + std::string(392, 'x') + "\\n\""));  // an escape is one
  const std::string word = R"({"type":"string","pattern":"^\\w+$","maxLength":40})";
  EXPECT_TRUE(valid(word, "\"" + std::string(40, 'w') + "\""));
  EXPECT_FALSE(prefix(word, "\"" + std::string(41, 'w')));
  EXPECT_FALSE(valid(word, R"("")"));
  EXPECT_FALSE(prefix(word, R"("a b)"));
  const std::string path = R"({"type":"string","pattern":"^/[\\w/.-]*$","maxLength":100})";
  EXPECT_TRUE(valid(path, R"("/usr/lib/x-1.2")"));
  EXPECT_TRUE(valid(path, R"("/")"));
  EXPECT_FALSE(prefix(path, R"("usr)"));
  EXPECT_FALSE(prefix(path, "\"/" + std::string(100, 'a')));
  // minLength: no upper bound, and both.
  const std::string least = R"({"pattern":"^[a-z]+$","minLength":3})";
  EXPECT_FALSE(valid(least, R"("ab")"));
  EXPECT_TRUE(valid(least, R"("abc")"));
  EXPECT_TRUE(valid(least, "\"" + std::string(500, 'z') + "\""));
  const std::string both = R"({"pattern":"^a*b*$","minLength":2,"maxLength":3})";
  EXPECT_FALSE(valid(both, R"("a")"));
  EXPECT_TRUE(valid(both, R"("ab")"));
  EXPECT_TRUE(valid(both, R"("abb")"));
  EXPECT_FALSE(prefix(both, R"("abba)"));
  // A search pattern: what remains must still fit, or the prefix is refused (no dead end).
  const std::string search = R"({"pattern":"ab","maxLength":4})";
  EXPECT_TRUE(valid(search, R"("xaby")"));
  EXPECT_TRUE(valid(search, R"("xxab")"));
  EXPECT_FALSE(prefix(search, R"("xxx)"));
  EXPECT_FALSE(valid(search, R"("xx")"));
  // Formats with lengths.
  const std::string date = R"({"type":"string","format":"date","minLength":10,"maxLength":10})";
  EXPECT_TRUE(valid(date, R"("2024-02-29")"));
  EXPECT_FALSE(prefix(date, R"("2024-13)"));
  const std::string email = R"({"type":"string","format":"email","maxLength":12})";
  EXPECT_TRUE(valid(email, R"("ab@cd.ef")"));
  EXPECT_FALSE(prefix(email, R"("abcdefghi@)"));  // 10, and "x.y" more would make 13
  EXPECT_FALSE(valid(email, R"("ab@cd")"));
  EXPECT_TRUE(valid(R"({"format":"uri","maxLength":3})", R"("abc")"));
  EXPECT_FALSE(prefix(R"({"format":"uri","maxLength":3})", R"("abcd)"));
  // Nothing satisfies both; pattern and format together stay unsupported.
  EXPECT_NE(error_of(R"({"pattern":"^a{5}$","maxLength":3})").find("no string"), std::string::npos);
  EXPECT_NE(error_of(R"({"pattern":"^a$","format":"date"})").find("pattern and format"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"pattern":"^\\w+$","maxLength":1000000})").find("schema too large"),
            std::string::npos);

  byte_walks(sql, '"', [](const std::string& t) {
    const std::string v = json::parse(t).get<std::string>();
    bool keyword = false;
    for (const char* k : {"SELECT", "WITH", "INSERT", "UPDATE", "DELETE"}) {
      const std::string kw = k;
      keyword = keyword || (v.compare(0, kw.size(), kw) == 0 && v.size() > kw.size() &&
                            std::isspace(static_cast<unsigned char>(v[kw.size()])));
    }
    return keyword && v.find(';') == std::string::npos && code_points(t) <= 400;
  });
  byte_walks(word, '"', [](const std::string& t) {
    const std::string v = json::parse(t).get<std::string>();
    return !v.empty() && v.size() <= 40 &&
           std::all_of(v.begin(), v.end(), [](char c) { return std::isalnum(c) || c == '_'; });
  });
  byte_walks(email, '"', [](const std::string& t) {
    const std::string v = json::parse(t).get<std::string>();
    return v.size() <= 12 && v.find('@') != std::string::npos;
  });
  byte_walks(least, '"', [](const std::string& t) { return code_points(t) >= 3; });
}

TEST(GrammarSchema, NumberBoundsExclusiveAtIntegers) {
  const std::string p = R"({"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1})";
  for (const char* t : {"0.5", "0.25", "0.001", "0.9999999999999999", "0.10"})
    EXPECT_TRUE(valid(p, t)) << t;
  for (const char* t : {"0", "0.0", "0.000", "1", "1.0", "-0.5", "1.5", "-0"})
    EXPECT_FALSE(valid(p, t)) << t;
  EXPECT_FALSE(prefix(p, "1"));
  const std::string in = R"({"type":"number","minimum":0,"maximum":1})";
  for (const char* t : {"0", "1", "0.5", "1.0", "1.00", "0.0"}) EXPECT_TRUE(valid(in, t)) << t;
  for (const char* t : {"1.5", "1.01", "-0.5", "2"}) EXPECT_FALSE(valid(in, t)) << t;
  const std::string neg = R"({"type":"number","exclusiveMinimum":-1,"exclusiveMaximum":0})";
  EXPECT_TRUE(valid(neg, "-0.5"));
  for (const char* t : {"-0.0", "0", "-1", "-1.0", "-0"}) EXPECT_FALSE(valid(neg, t)) << t;
  const std::string wide = R"({"type":"number","exclusiveMinimum":2,"maximum":5})";
  for (const char* t : {"2.5", "3", "4.75", "5", "5.0"}) EXPECT_TRUE(valid(wide, t)) << t;
  for (const char* t : {"2", "2.0", "5.5", "5.01", "1.5"}) EXPECT_FALSE(valid(wide, t)) << t;
  // Next to a strict bound, short enough that a double reader keeps it off the bound.
  EXPECT_TRUE(valid(wide, "2.00000000000001"));
  EXPECT_FALSE(valid(wide, "2.000000000000001"));
  EXPECT_TRUE(valid(wide, "3.000000000000001"));  // 3 is not a bound
  for (const std::string& s : {p, in, neg, wide}) {
    const auto b = json::parse(s);
    byte_walks(s, '0', [&](const std::string& t) {
      const double v = std::stod(t);
      const bool lo = b.contains("minimum") ? v >= b["minimum"].get<double>()
                                            : v > b["exclusiveMinimum"].get<double>();
      const bool hi = b.contains("maximum") ? v <= b["maximum"].get<double>()
                                            : v < b["exclusiveMaximum"].get<double>();
      return lo && hi;
    });
  }
}

TEST(GrammarSchema, Formats) {
  auto f = [](const char* fmt) {
    return std::string(R"({"type":"string","format":")") + fmt + "\"}";
  };
  EXPECT_TRUE(valid(f("date"), R"("2024-02-29")"));
  EXPECT_FALSE(prefix(f("date"), R"("2024-13)"));
  EXPECT_TRUE(valid(f("time"), R"("23:59:07.123Z")"));
  EXPECT_TRUE(valid(f("time"), R"("08:00:00+05:30")"));
  EXPECT_FALSE(prefix(f("time"), R"("24)"));
  EXPECT_TRUE(valid(f("date-time"), R"("2024-01-31T12:00:00Z")"));
  EXPECT_FALSE(valid(f("date-time"), R"("2024-01-31 12:00:00Z")"));
  EXPECT_TRUE(valid(f("uuid"), R"("123e4567-e89b-12d3-a456-426614174000")"));
  EXPECT_FALSE(prefix(f("uuid"), R"("123e4567e)"));
  EXPECT_TRUE(valid(f("email"), R"("john.doe+x@mail.example.com")"));
  EXPECT_FALSE(valid(f("email"), R"("john@localhost")"));
  EXPECT_TRUE(valid(f("uri"), R"("anything")"));  // other formats are annotations
}

TEST(GrammarSchema, Whitespace) {
  const std::string s = R"({"type":"array","items":{"type":"integer"}})";
  EXPECT_TRUE(valid(s, "[ 1,\n\t\t2 ]"));
  EXPECT_FALSE(prefix(s, "[  1"));                        // at most one space
  EXPECT_FALSE(prefix(s, "[\n" + std::string(21, ' ')));  // at most 20 after a newline
  EXPECT_FALSE(prefix(s, " ["));                          // none before the root
  EXPECT_FALSE(prefix(s, "[1] "));                        // nor after it
}

TEST(GrammarSchema, UnsupportedKeywordsAreNamed) {
  EXPECT_EQ(error_of(R"({"properties":{"a":{"not":{"type":"string"}}}})"),
            "unsupported JSON schema keyword 'not' at /properties/a");
  for (const char* k : {"if", "patternProperties", "uniqueItems", "contains", "multipleOf",
                        "minProperties", "propertyNames", "unevaluatedProperties"}) {
    const std::string e = error_of(std::string(R"({"items":{")") + k + R"(":1}})");
    EXPECT_EQ(e, std::string("unsupported JSON schema keyword '") + k + "' at /items") << k;
  }
  EXPECT_NE(error_of(R"({"allOf":[{"type":"string"},{"minLength":1}]})").find("'allOf'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"$ref":"#/$defs/missing"})").find("unresolvable $ref"), std::string::npos);
  EXPECT_NE(error_of(R"({"$ref":"http://x/y"})").find("unsupported $ref"), std::string::npos);
  EXPECT_NE(error_of(R"({"type":"strin"})").find("unknown type"), std::string::npos);
  EXPECT_NE(error_of(R"({"$ref":"#"})").find("left-recursive"), std::string::npos);
  EXPECT_NE(error_of(R"({"anyOf":[{"$ref":"#"},{"type":"null"}]})").find("left-recursive"),
            std::string::npos);
  EXPECT_THROW(compile_json_schema(json{{"const", "\xFF"}}), heron::Error);
  // Annotations are fine.
  EXPECT_EQ(error_of(R"({"title":"t","description":"d","$schema":"x","examples":[1],
    "default":1,"strict":true,"type":"integer"})"),
            "");
}

TEST(GrammarSchema, BlowupsAreErrors) {
  EXPECT_NE(error_of(R"({"type":"array","maxItems":1000000000})").find("schema too large"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"type":"string","maxLength":1000000000})").find("schema too large"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"type":"string","minLength":1000000000})").find("schema too large"),
            std::string::npos);
  std::string many;  // each count is allowed, all of them together are not
  for (char c = 'a'; c <= 'k'; ++c) many += std::string(1, c) + "{100000}";
  EXPECT_NE(error_of(json{{"pattern", many}}.dump()).find("schema too large"), std::string::npos);
  EXPECT_EQ(error_of(R"j({"pattern":"^((a{1000}){1000}){1000}$"})j"), "");  // small grammar
  // Ambiguous counted repetition: the stack set is capped, so each step stays bounded (the
  // output may dead-end, never turn invalid).
  Matcher amb = matcher(R"j({"pattern":"^(a{1,1000}){1,1000}$"})j");
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 400 && amb.accept_bytes(i == 0 ? "\"" : "a"); ++i) (void)amb.allowed();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += R"({"items":)";
  deep += "true" + std::string(100000, '}');
  EXPECT_NE(error_of(deep).find("nested too deeply"), std::string::npos);
  EXPECT_THROW(compile_json_schema(json::parse(deep)), heron::Error);  // no recursion first
  std::string groups(100000, '(');
  EXPECT_NE(error_of(json{{"pattern", groups}}.dump()).find("unsupported pattern"),
            std::string::npos);
}

TEST(GrammarMatcher, EndTokensAndMemo) {
  Matcher m = matcher(R"({"type":"integer"})");
  EXPECT_FALSE(m.allowed()->allowed[256]);
  EXPECT_FALSE(m.accept(256));
  EXPECT_TRUE(m.accept('7'));
  EXPECT_TRUE(m.allowed()->allowed[256]);
  EXPECT_TRUE(m.allowed()->allowed['0']);
  EXPECT_FALSE(m.allowed()->allowed['a']);
  EXPECT_FALSE(m.accept('a'));
  EXPECT_EQ(m.allowed(), m.allowed());  // memoized per state
  Matcher copy = m;
  EXPECT_EQ(copy.allowed(), m.allowed());
  EXPECT_TRUE(copy.accept('1'));
  EXPECT_NE(copy.allowed(), m.allowed());
  EXPECT_TRUE(m.accept(256));
  // A string's content loops back to the same state: the same mask.
  Matcher s = matcher(R"({"type":"string"})");
  ASSERT_TRUE(s.accept_bytes("\"a"));
  const auto before = s.allowed();
  ASSERT_TRUE(s.accept_bytes("bc"));
  EXPECT_EQ(s.allowed(), before);
  EXPECT_FALSE(s.accept_bytes("d\x01"));  // all or nothing
  EXPECT_EQ(s.allowed(), before);
}

// ---- Qwen3's vocabulary ------------------------------------------------------------------

struct Qwen {
  std::unique_ptr<heron::tokenizer::Tokenizer> tok;
  std::shared_ptr<const Vocabulary> vocab;
};

const Qwen& qwen() {
  static const Qwen q = [] {
    Qwen out;
    out.tok = heron::tokenizer::Tokenizer::from_hf_dir(tokenizer_test::hf_dir("qwen3"));
    const int32_t end = *out.tok->token_to_id("<|im_end|>");
    const auto t0 = std::chrono::steady_clock::now();
    out.vocab = Vocabulary::from_tokenizer(*out.tok, {end, *out.tok->eos_id()});
    std::printf(
        "Qwen3 vocabulary (%d ids, %zu trie nodes) built in %.0f ms\n", out.vocab->size(),
        out.vocab->trie().size(),
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    return out;
  }();
  return q;
}

void expect_mask_is_brute_force(const Matcher& m, const std::string& what) {
  const auto mask = m.allowed();
  const Vocabulary& v = *qwen().vocab;
  ASSERT_EQ(mask->allowed.size(), static_cast<size_t>(v.size()));
  size_t allowed = 0;
  for (int32_t id = 0; id < v.size(); ++id) {
    Matcher c = m;
    const bool ok = v.is_end(id)
                        ? c.accepting()
                        : (v.bytes(id) && !v.bytes(id)->empty() && c.accept_bytes(*v.bytes(id)));
    ASSERT_EQ(mask->allowed[id] != 0, ok) << what << ": token " << id;
    ASSERT_EQ(Matcher(m).accept(id), ok) << what << ": token " << id;
    allowed += ok;
  }
  EXPECT_GT(allowed, 0u) << what;
}

TEST(GrammarQwen3, MaskEqualsBruteForce) {
  const std::string s = R"({"type":"object","properties":{"name":{"type":"string","maxLength":5},
    "age":{"type":"integer","minimum":0,"maximum":150},"tags":{"type":"array",
    "items":{"enum":["a","b"]}}},"required":["name"]})";
  const auto g = compile_json_schema(ordered_json::parse(s));
  for (const char* p :
       {"", "{", "{\"name\":\"", "{\"name\":\"ab", "{\"name\":\"\xC3", "{\"name\":\"a\",\"age\":1",
        "{\"name\":\"a\",\"tags\":[", "{\"name\":\"a\"}"}) {
    Matcher m(g, qwen().vocab);
    ASSERT_TRUE(m.accept_bytes(p)) << p;
    expect_mask_is_brute_force(m, p);
  }
  Matcher any(json_object_grammar(), qwen().vocab);
  ASSERT_TRUE(any.accept_bytes("{\"k\": [1, {\"x\": tr"));
  expect_mask_is_brute_force(any, "json object");
  Matcher in_string(json_object_grammar(), qwen().vocab);  // plain subtrees taken whole
  ASSERT_TRUE(in_string.accept_bytes("{\"k\": [1, {\"x\": \"ab"));
  expect_mask_is_brute_force(in_string, "inside an unbounded string");
  Matcher key(compile_json_schema(ordered_json::parse(
                  R"({"properties":{"a":{}},"additionalProperties":{"type":"integer"}})")),
              qwen().vocab);  // an extra key: plain bytes still may not spell "a"
  ASSERT_TRUE(key.accept_bytes("{\""));
  expect_mask_is_brute_force(key, "extra key");
}

// Random walks over allowed tokens until complete(); prints the mask costs (cold: a state
// first seen; all: every step, memo hits included).
TEST(GrammarQwen3, RandomWalksEndInValidJson) {
  const std::vector<std::pair<std::string, std::function<bool(const json&)>>> cases = {
      {R"({"type":"object","properties":{"name":{"type":"string","maxLength":20},
         "age":{"type":"integer","minimum":18,"maximum":99},"email":{"type":"string",
         "format":"email"},"tags":{"type":"array","items":{"type":"string","maxLength":8},
         "maxItems":3}},"required":["name","age","email"]})",
       [](const json& j) {
         return j.is_object() && j["name"].is_string() && j["age"].is_number_integer() &&
                j["age"] >= 18 && j["age"] <= 99 &&
                j["email"].get<std::string>().find('@') != std::string::npos &&
                (!j.contains("tags") || j["tags"].size() <= 3);
       }},
      {R"({"type":"array","items":{"anyOf":[{"type":"number","minimum":-1,"maximum":1},
         {"type":"boolean"}]},"minItems":2,"maxItems":6})",
       [](const json& j) {
         if (!j.is_array() || j.size() < 2 || j.size() > 6) return false;
         for (const auto& x : j)
           if (!x.is_boolean() && !(x.is_number() && x >= -1 && x <= 1)) return false;
         return true;
       }},
      {R"({"$defs":{"n":{"type":"object","properties":{"id":{"type":"string",
         "pattern":"^[A-Z]{2}-\\d{3}$"},"kids":{"type":"array","items":{"$ref":"#/$defs/n"},
         "maxItems":2}},"required":["id"]}},"$ref":"#/$defs/n"})",
       [](const json& j) { return j.is_object() && j["id"].get<std::string>().size() == 6; }},
      {R"({"type":"object","properties":{"q":{"type":"string","maxLength":400,
         "pattern":"^(SELECT|WITH|INSERT|UPDATE|DELETE)\\s[^;]*$"},"p":{"type":"number",
         "exclusiveMinimum":0,"exclusiveMaximum":1}},"required":["q","p"]})",
       [](const json& j) {
         const std::string q = j["q"];
         return q.find(';') == std::string::npos && j["p"] > 0 && j["p"] < 1;
       }},
      {"", [](const json& j) { return j.is_object(); }},
  };
  int finished = 0;
  std::mt19937 rng(1234);
  std::vector<int32_t> closers;  // picked often so that walks end
  for (const char* t : {"\"", "}", "]", "\"}", "]}"})
    if (auto id = qwen().tok->token_to_id(t)) closers.push_back(*id);
  for (int32_t id : qwen().vocab->end_ids()) closers.push_back(id);
  std::vector<double> cold, all;
  for (const auto& [schema, check] : cases) {
    const auto g =
        schema.empty() ? json_object_grammar() : compile_json_schema(ordered_json::parse(schema));
    for (int walk = 0; walk < 4; ++walk) {
      Matcher m(g, qwen().vocab);  // a fresh mask cache: every state starts cold
      std::vector<std::shared_ptr<const TokenMask>> seen;
      std::string text;
      for (int steps = 0; !m.complete() && steps < 300; ++steps) {
        const auto t0 = std::chrono::steady_clock::now();
        const auto mask = m.allowed();
        const double us =
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                .count();
        all.push_back(us);
        if (std::find(seen.begin(), seen.end(), mask) == seen.end()) {
          cold.push_back(us);
          seen.push_back(mask);
        }
        std::vector<int32_t> ids;
        if (rng() % 3 == 0)
          for (int32_t id : closers)
            if (mask->allowed[id]) ids.push_back(id);
        if (ids.empty())
          for (int32_t id = 0; id < qwen().vocab->size(); ++id)
            if (mask->allowed[id]) ids.push_back(id);
        ASSERT_FALSE(ids.empty()) << schema << "\n" << text;
        const int32_t id = ids[std::uniform_int_distribution<size_t>(0, ids.size() - 1)(rng)];
        ASSERT_TRUE(m.accept(id));
        if (qwen().vocab->is_end(id)) break;
        text += *qwen().vocab->bytes(id);
      }
      if (!m.accepting()) continue;  // step cap reached: nothing to check
      ++finished;
      json j;
      ASSERT_NO_THROW(j = json::parse(text)) << text;
      EXPECT_TRUE(check(j)) << text;
    }
  }
  EXPECT_GE(finished, 12);
  auto median = [](std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  std::printf(
      "mask cost: %zu steps, median %.1f us; %zu cold (first time in a state), "
      "median %.1f us, max %.1f us\n",
      all.size(), median(all), cold.size(), median(cold),
      cold.empty() ? 0.0 : *std::max_element(cold.begin(), cold.end()));
}

// A model-like output (Qwen3's own tokenization of a valid answer), token by token: the
// mask cost in a fresh Matcher (every state cold) and again in a copy of it (memo hits).
TEST(GrammarQwen3, MaskCostAlongARealOutput) {
  const std::string schema = R"({"type":"object","properties":{"name":{"type":"string"},
    "age":{"type":"integer","minimum":0,"maximum":150},"email":{"type":"string","format":"email"},
    "address":{"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}},
    "required":["street","city"]},"tags":{"type":"array","items":{"type":"string"}}},
    "required":["name","age","email","address","tags"]})";
  const std::string text =
      R"({"name": "Alice Smith", "age": 31, "email": "alice.smith@example.com", "address": )"
      R"({"street": "12 Rue de la Paix, 2e étage", "city": "Paris"}, "tags": ["admin", )"
      R"("ops", "on-call rotation for the \"core\" team"]})";
  const auto ids = qwen().tok->encode(text, /*add_special=*/false);
  const int32_t end = *qwen().tok->token_to_id("<|im_end|>");
  const auto g = compile_json_schema(ordered_json::parse(schema));
  const Matcher start(g, qwen().vocab);
  for (const char* pass : {"cold", "warm"}) {
    Matcher m = start;
    std::vector<double> us;
    for (size_t k = 0; k <= ids.size(); ++k) {
      const int32_t id = k < ids.size() ? ids[k] : end;
      const auto t0 = std::chrono::steady_clock::now();
      const auto mask = m.allowed();
      us.push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      ASSERT_TRUE(mask->allowed[id]) << "token " << k << " of " << ids.size();
      ASSERT_TRUE(m.accept(id));
    }
    EXPECT_TRUE(m.complete());
    std::sort(us.begin(), us.end());
    std::printf("%s pass over %zu tokens: median %.1f us, p90 %.1f us, max %.1f us\n", pass,
                us.size(), us[us.size() / 2], us[us.size() * 9 / 10], us.back());
  }
}

}  // namespace
