#include "heron/grammar/json_schema.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <unordered_map>

#include "heron/core/error.h"
#include "heron/grammar/code_points.h"
#include "heron/grammar/regex.h"

namespace heron::grammar {
namespace {

using ojson = nlohmann::ordered_json;
using Seq = GrammarBuilder::Seq;
using B = GrammarBuilder;

constexpr int kMaxDepth = 64;                         // nested schemas
constexpr size_t kMaxValueDepth = 512;                // nested JSON values anywhere in the schema
constexpr int64_t kIntLimit = 9'999'999'999'999'999;  // 16 digits
constexpr size_t kMaxNameLength = 1000;

const std::set<std::string, std::less<>> kAnnotations = {
    "title",      "description", "$schema",   "$id",    "$comment", "examples", "default",
    "deprecated", "readOnly",    "writeOnly", "strict", "name",     "$defs",    "definitions"};
const std::set<std::string, std::less<>> kSupported = {"type",
                                                       "properties",
                                                       "required",
                                                       "additionalProperties",
                                                       "enum",
                                                       "const",
                                                       "items",
                                                       "prefixItems",
                                                       "additionalItems",
                                                       "minItems",
                                                       "maxItems",
                                                       "anyOf",
                                                       "oneOf",
                                                       "allOf",
                                                       "$ref",
                                                       "minLength",
                                                       "maxLength",
                                                       "pattern",
                                                       "format",
                                                       "minimum",
                                                       "maximum",
                                                       "exclusiveMinimum",
                                                       "exclusiveMaximum"};

std::string child(const std::string& ptr, std::string_view key) {
  std::string out = ptr + "/";
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string where(const std::string& ptr) {
  return ptr.empty() ? "/" : ptr;
}

Seq cat(std::initializer_list<Seq> parts) {
  Seq out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

Seq r(uint32_t rule) {
  return {B::ref(rule)};
}

class Compiler {
 public:
  explicit Compiler(const ojson& root) : root_(root) {
    const uint32_t blank = b_.add({B::literal(" "), B::literal("\t")});
    space_ = b_.add({{}, B::literal(" "), cat({B::literal("\n"), r(b_.repeat(blank, 0, 20))})});
    // Any string also takes the other escapes a model may write.
    char_ = json_char_rule(b_, any_code_point(), /*other_escapes=*/true);
    chars_ = b_.repeat(char_, 0, std::nullopt);
    string_ = b_.add({cat({B::literal("\""), r(chars_), B::literal("\"")})});
    digit_ = b_.add({{B::bytes('0', '9')}});
    const uint32_t natural =
        b_.add({B::literal("0"), {B::bytes('1', '9'), B::ref(b_.repeat(digit_, 0, 15))}});
    const uint32_t minus = b_.add({{}, B::literal("-")});
    integer_ = b_.add({{B::ref(minus), B::ref(natural)}});
    fraction_ = b_.add({cat({B::literal("."), r(b_.repeat(digit_, 1, 16))})});
    const uint32_t sign = b_.add({{}, B::literal("+"), B::literal("-")});
    const uint32_t exp = b_.add({{},
                                 cat({{B::bytes('E', 'E')}, r(sign), r(b_.repeat(digit_, 1, 2))}),
                                 cat({{B::bytes('e', 'e')}, r(sign), r(b_.repeat(digit_, 1, 2))})});
    number_ = b_.add({{B::ref(integer_), B::ref(b_.add({{}, r(fraction_)})), B::ref(exp)}});
  }

  uint32_t compile_root() { return compile(root_, ""); }

  uint32_t any_value() {
    if (value_) return *value_;
    value_ = b_.declare();
    const uint32_t member =
        b_.add({cat({r(string_), r(space_), B::literal(":"), r(space_), r(*value_), r(space_)})});
    const uint32_t members =
        b_.repeat(b_.add({cat({B::literal(","), r(space_), r(member)})}), 0, std::nullopt);
    object_ = b_.add({cat({B::literal("{"), r(space_),
                           r(b_.add({{}, {B::ref(member), B::ref(members)}})), B::literal("}")})});
    const uint32_t element = b_.add({{B::ref(*value_), B::ref(space_)}});
    const uint32_t elements =
        b_.repeat(b_.add({cat({B::literal(","), r(space_), r(element)})}), 0, std::nullopt);
    const uint32_t array =
        b_.add({cat({B::literal("["), r(space_),
                     r(b_.add({{}, {B::ref(element), B::ref(elements)}})), B::literal("]")})});
    b_.define(*value_, {r(*object_), r(array), r(string_), r(number_), B::literal("true"),
                        B::literal("false"), B::literal("null")});
    return *value_;
  }

  uint32_t any_object() {
    any_value();
    return *object_;
  }

  GrammarBuilder& builder() { return b_; }

 private:
  [[noreturn]] static void invalid(const std::string& ptr, const std::string& why) {
    throw Error("invalid JSON schema at " + where(ptr) + ": " + why);
  }

  uint32_t compile(const ojson& s, const std::string& ptr) {
    if (++depth_ > kMaxDepth)
      throw Error("JSON schema nested too deeply (over " + std::to_string(kMaxDepth) +
                  " levels) at " + where(ptr));
    const uint32_t rule = compile_inner(s, ptr);
    --depth_;
    return rule;
  }

  uint32_t compile_inner(const ojson& s, const std::string& ptr) {
    if (s.is_boolean()) {
      if (!s.get<bool>()) invalid(ptr, "schema false accepts no value");
      return any_value();
    }
    if (!s.is_object()) invalid(ptr, "expected an object or a boolean");
    std::vector<std::string> constraining;
    for (const auto& [key, v] : s.items()) {
      if (kAnnotations.contains(key)) continue;
      if (!kSupported.contains(key))
        throw Error("unsupported JSON schema keyword '" + key + "' at " + where(ptr));
      constraining.push_back(key);
    }
    // Combinators stand alone: their conjunction with siblings is not supported.
    for (const char* only : {"$ref", "anyOf", "oneOf", "allOf"}) {
      if (!s.contains(only)) continue;
      for (const auto& k : constraining)
        if (k != only)
          throw Error("unsupported JSON schema keyword '" + k + "' beside '" + only + "' at " +
                      where(ptr));
    }
    if (s.contains("$ref")) return reference(s["$ref"], child(ptr, "$ref"));
    for (const char* key : {"anyOf", "oneOf"}) {
      if (!s.contains(key)) continue;
      const auto& list = s[key];
      if (!list.is_array() || list.empty()) invalid(child(ptr, key), "expected a non-empty array");
      std::vector<Seq> alts;
      for (size_t i = 0; i < list.size(); ++i)
        alts.push_back(r(compile(list[i], child(child(ptr, key), std::to_string(i)))));
      return b_.add(std::move(alts));
    }
    if (s.contains("allOf")) {
      const auto& list = s["allOf"];
      if (!list.is_array() || list.empty())
        invalid(child(ptr, "allOf"), "expected a non-empty array");
      if (list.size() != 1)
        throw Error("unsupported JSON schema keyword 'allOf' with more than one schema at " +
                    where(ptr));
      return compile(list[0], child(ptr, "allOf/0"));
    }

    std::vector<std::string> types;
    if (s.contains("type")) {
      const auto& t = s["type"];
      if (t.is_string()) {
        types.push_back(t.get<std::string>());
      } else if (t.is_array() && !t.empty()) {
        for (const auto& x : t) {
          if (!x.is_string()) invalid(child(ptr, "type"), "expected strings");
          types.push_back(x.get<std::string>());
        }
      } else {
        invalid(child(ptr, "type"), "expected a string or a non-empty array");
      }
    }
    if (s.contains("const")) return b_.add({B::literal(s["const"].dump())});
    if (s.contains("enum")) return enumeration(s["enum"], types, child(ptr, "enum"));
    if (types.empty()) {
      auto has = [&](std::initializer_list<const char*> keys) {
        return std::any_of(keys.begin(), keys.end(), [&](const char* k) { return s.contains(k); });
      };
      if (has({"properties", "additionalProperties", "required"})) {
        types.emplace_back("object");
      } else if (has({"items", "prefixItems", "additionalItems", "minItems", "maxItems"})) {
        types.emplace_back("array");
      } else if (has({"minLength", "maxLength", "pattern", "format"})) {
        types.emplace_back("string");
      } else if (has({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})) {
        types.emplace_back("number");
      } else {
        return any_value();
      }
    }
    std::vector<Seq> alts;
    alts.reserve(types.size());
    for (const auto& t : types) alts.push_back(r(typed(s, t, ptr)));
    return b_.add(std::move(alts));
  }

  uint32_t reference(const ojson& ref, const std::string& ptr) {
    if (!ref.is_string()) invalid(ptr, "expected a string");
    const auto& target = ref.get_ref<const std::string&>();
    if (auto it = refs_.find(target); it != refs_.end()) return it->second;
    if (target.empty() || target[0] != '#')
      throw Error("unsupported $ref '" + target + "' at " + where(ptr) +
                  ": only references inside the schema (#...) are supported");
    const ojson* resolved = nullptr;
    try {
      resolved = &root_.at(ojson::json_pointer(target.substr(1)));
    } catch (const nlohmann::json::exception&) {
      throw Error("unresolvable $ref '" + target + "' at " + where(ptr));
    }
    const uint32_t rule = b_.declare();
    refs_.emplace(target, rule);
    b_.define(rule, {r(compile(*resolved, target.substr(1)))});
    return rule;
  }

  static bool has_type(const ojson& v, const std::string& t) {
    if (t == "null") return v.is_null();
    if (t == "boolean") return v.is_boolean();
    if (t == "string") return v.is_string();
    if (t == "array") return v.is_array();
    if (t == "object") return v.is_object();
    if (t == "integer")
      return v.is_number_integer() ||
             (v.is_number() && std::trunc(v.get<double>()) == v.get<double>());
    return t == "number" && v.is_number();
  }

  // The values as one trie of bytes, so that a parse state holds one stack however many
  // values share a prefix (a flat alternative per value would hold one each).
  uint32_t enumeration(const ojson& list, const std::vector<std::string>& types,
                       const std::string& ptr) {
    if (!list.is_array()) invalid(ptr, "expected an array");
    struct Node {
      std::map<uint8_t, uint32_t> children;
      bool terminal = false;
    };
    std::vector<Node> trie(1);
    size_t bytes = 0;
    for (const auto& v : list) {
      if (!types.empty() &&
          std::none_of(types.begin(), types.end(), [&](const auto& t) { return has_type(v, t); }))
        continue;
      const std::string text = v.dump();
      b_.check_room(bytes += text.size());
      uint32_t n = 0;
      for (char c : text) {
        auto [it, fresh] = trie[n].children.try_emplace(static_cast<uint8_t>(c),
                                                        static_cast<uint32_t>(trie.size()));
        if (fresh) trie.emplace_back();
        n = it->second;
      }
      trie[n].terminal = true;
    }
    if (trie.size() == 1) invalid(ptr, "no value of the enum has the schema's type");
    // Children come after their parent: build rules from the end; a node on a chain (one
    // child, not a value's end) is folded into the sequence that reaches it.
    std::vector<uint32_t> rule(trie.size());
    for (size_t n = trie.size(); n-- > 0;) {
      const Node& node = trie[n];
      if (n != 0 && !node.terminal && node.children.size() == 1) continue;
      std::vector<Seq> alts;
      if (node.terminal) alts.emplace_back();
      for (auto [byte, next] : node.children) {
        Seq seq{B::bytes(byte, byte)};
        while (!trie[next].terminal && trie[next].children.size() == 1) {
          const auto [b, after] = *trie[next].children.begin();
          seq.push_back(B::bytes(b, b));
          next = after;
        }
        if (!trie[next].children.empty()) seq.push_back(B::ref(rule[next]));
        alts.push_back(std::move(seq));
      }
      rule[n] = b_.add(std::move(alts));
    }
    return rule[0];
  }

  uint32_t typed(const ojson& s, const std::string& t, const std::string& ptr) {
    if (t == "null") return b_.add({B::literal("null")});
    if (t == "boolean") return b_.add({B::literal("true"), B::literal("false")});
    if (t == "integer" || t == "number") return numeric(s, t == "integer", ptr);
    if (t == "string") return string(s, ptr);
    if (t == "array") return array(s, ptr);
    if (t == "object") return object(s, ptr);
    invalid(child(ptr, "type"), "unknown type '" + t + "'");
  }

  // ---- numbers -----------------------------------------------------------------------

  static double number_at(const ojson& s, const char* key, const std::string& ptr) {
    const auto& v = s[key];
    if (!v.is_number()) invalid(child(ptr, key), "expected a number");
    return v.get<double>();
  }

  static int64_t clamp_int(double x) { return static_cast<int64_t>(std::clamp(x, -1e17, 1e17)); }

  // The exact number 10^d - 1.
  static int64_t nines(size_t d) {
    int64_t v = 0;
    for (size_t k = 0; k < d; ++k) v = v * 10 + 9;
    return v;
  }

  uint32_t digits(size_t n) { return b_.repeat(digit_, n, n); }

  // Decimal strings of one length in [lo, hi] (no sign).
  uint32_t same_length(const std::string& lo, const std::string& hi) {
    if (lo.empty()) return b_.add({{}});
    const auto a = static_cast<uint8_t>(lo[0]), z = static_cast<uint8_t>(hi[0]);
    const std::string lo_rest = lo.substr(1), hi_rest = hi.substr(1);
    if (a == z) return b_.add({{B::bytes(a, a), B::ref(same_length(lo_rest, hi_rest))}});
    const std::string zeros(lo_rest.size(), '0'), all_nines(lo_rest.size(), '9');
    if (lo_rest == zeros && hi_rest == all_nines)
      return b_.add({{B::bytes(a, z), B::ref(digits(lo_rest.size()))}});
    std::vector<Seq> alts;
    alts.push_back({B::bytes(a, a), B::ref(same_length(lo_rest, all_nines))});
    if (a + 1 <= z - 1)
      alts.push_back({B::bytes(static_cast<uint8_t>(a + 1), static_cast<uint8_t>(z - 1)),
                      B::ref(digits(lo_rest.size()))});
    alts.push_back({B::bytes(z, z), B::ref(same_length(zeros, hi_rest))});
    return b_.add(std::move(alts));
  }

  // Naturals in [lo, hi], 0 <= lo <= hi, without leading zeros.
  uint32_t natural_range(int64_t lo, int64_t hi) {
    std::vector<Seq> alts;
    for (size_t d = std::to_string(lo).size(); d <= std::to_string(hi).size(); ++d) {
      const int64_t first = d == 1 ? 0 : nines(d - 1) + 1;
      const int64_t a = std::max(lo, first), z = std::min(hi, nines(d));
      if (a <= z) alts.push_back(r(same_length(std::to_string(a), std::to_string(z))));
    }
    return b_.add(std::move(alts));
  }

  // Integers in [lo, hi] as JSON writes them (no "-0").
  uint32_t integer_range(int64_t lo, int64_t hi) {
    std::vector<Seq> alts;
    if (lo < 0)
      alts.push_back(cat({B::literal("-"), r(natural_range(std::max<int64_t>(1, -hi), -lo))}));
    if (hi >= 0) alts.push_back(r(natural_range(std::max<int64_t>(0, lo), hi)));
    return b_.add(std::move(alts));
  }

  // "." and 1..16 zeros.
  uint32_t zero_fraction() {
    return b_.add({cat({B::literal("."), r(b_.repeat(b_.add({B::literal("0")}), 1, 16))})});
  }

  // "." and 1..`max` digits, not all zeros.
  uint32_t nonzero_fraction(size_t max) {
    // tail: n digits at most, at least one of them non-zero.
    uint32_t tail = b_.add({{B::bytes('1', '9')}});
    for (size_t n = 2; n <= max; ++n)
      tail = b_.add({{B::bytes('1', '9'), B::ref(b_.repeat(digit_, 0, n - 1))},
                     {B::bytes('0', '0'), B::ref(tail)}});
    return b_.add({cat({B::literal("."), r(tail)})});
  }

  uint32_t numeric(const ojson& s, bool integer, const std::string& ptr) {
    const bool bounded = s.contains("minimum") || s.contains("maximum") ||
                         s.contains("exclusiveMinimum") || s.contains("exclusiveMaximum");
    if (!bounded) return integer ? integer_ : number_;
    // Bounds as [lo, hi] with strictness; draft-04's boolean exclusive* modify minimum/maximum.
    double lo = -INFINITY, hi = INFINITY;
    bool lo_strict = false, hi_strict = false;
    auto lower = [&](double v, bool strict) {
      if (v > lo || (v == lo && strict)) lo = v, lo_strict = strict;
    };
    auto upper = [&](double v, bool strict) {
      if (v < hi || (v == hi && strict)) hi = v, hi_strict = strict;
    };
    auto flag = [&](const char* key) {
      return s.contains(key) && s[key].is_boolean() && s[key].get<bool>();
    };
    if (s.contains("minimum")) lower(number_at(s, "minimum", ptr), flag("exclusiveMinimum"));
    if (s.contains("maximum")) upper(number_at(s, "maximum", ptr), flag("exclusiveMaximum"));
    if (s.contains("exclusiveMinimum") && !s["exclusiveMinimum"].is_boolean())
      lower(number_at(s, "exclusiveMinimum", ptr), true);
    if (s.contains("exclusiveMaximum") && !s["exclusiveMaximum"].is_boolean())
      upper(number_at(s, "exclusiveMaximum", ptr), true);
    if (std::isnan(lo) || std::isnan(hi)) invalid(ptr, "bound is not a number");

    // Integer values.
    const int64_t ilo =
        std::max(-kIntLimit, clamp_int(lo_strict ? std::floor(lo) + 1 : std::ceil(lo)));
    const int64_t ihi =
        std::min(kIntLimit, clamp_int(hi_strict ? std::ceil(hi) - 1 : std::floor(hi)));
    std::vector<Seq> alts;
    if (integer) {
      if (ilo <= ihi) alts.push_back(r(integer_range(ilo, ihi)));
    } else {
      // An integer in the bounds, with or without an all-zero fraction (1, 1.0, 1.00).
      if (ilo <= ihi)
        alts.push_back(cat({r(integer_range(ilo, ihi)), r(b_.add({{}, r(zero_fraction())}))}));
      // A fraction with a non-zero digit: ip.frac lies in (ip, ip + 1), -ip.frac in
      // (-(ip + 1), -ip); whichever the bounds' strictness, that is inside when lo <= ip and
      // ip + 1 <= hi (lo <= -(ip + 1) and -ip <= hi). So 0 < x < 1 writes 0.5, never 0.0.
      // Next to a strict bound the fraction is short enough (15 significant digits) that a
      // reader's double keeps it off the bound: 2.0000000000000001 would read as 2.
      auto fractional = [&](int64_t a, int64_t z, bool strict_a, bool strict_z, const Seq& sign) {
        auto one = [&](int64_t ip) {
          // 0.x: 16 digits still read as neither 0 nor 1.
          const size_t room = ip == 0 ? 16 : 15 - std::min<size_t>(15, std::to_string(ip).size());
          if (room > 0)
            alts.push_back(cat({sign, r(natural_range(ip, ip)), r(nonzero_fraction(room))}));
        };
        if (a > z) return;
        if (strict_a) one(a++);
        if (a > z) return;
        if (strict_z) one(z--);
        if (a <= z) alts.push_back(cat({sign, r(natural_range(a, z)), r(nonzero_fraction(16))}));
      };
      const int64_t p_lo = std::max<int64_t>(0, clamp_int(std::ceil(lo)));
      const int64_t p_hi = std::min(kIntLimit, clamp_int(std::floor(hi)) - 1);
      fractional(p_lo, p_hi, lo_strict && lo == static_cast<double>(p_lo),
                 hi_strict && hi == static_cast<double>(p_hi + 1), {});
      const int64_t n_lo = std::max<int64_t>(0, clamp_int(std::ceil(-hi)));
      const int64_t n_hi = std::min(kIntLimit, clamp_int(std::floor(-lo)) - 1);
      fractional(n_lo, n_hi, hi_strict && -hi == static_cast<double>(n_lo),
                 lo_strict && -lo == static_cast<double>(n_hi + 1), B::literal("-"));
    }
    if (alts.empty())
      invalid(ptr, integer ? "no integer satisfies the bounds"
                           : "the bounds leave no number this grammar can write (between "
                             "non-integer bounds it writes only integers and decimals whose "
                             "whole integer part fits)");
    return b_.add(std::move(alts));
  }

  // ---- strings -----------------------------------------------------------------------

  static size_t count_at(const ojson& s, const char* key, const std::string& ptr) {
    const auto& v = s[key];
    if (!v.is_number_integer() || v.get<int64_t>() < 0)
      invalid(child(ptr, key), "expected a non-negative integer");
    return v.get<size_t>();
  }

  uint32_t quoted(uint32_t content) {
    return b_.add({cat({B::literal("\""), r(content), B::literal("\"")})});
  }

  uint32_t format(const std::string& f) {
    auto d = [&](char lo, char hi) {
      return Element(B::bytes(static_cast<uint8_t>(lo), static_cast<uint8_t>(hi)));
    };
    const uint32_t hex = b_.add({{d('0', '9')}, {d('a', 'f')}, {d('A', 'F')}});
    const uint32_t date = b_.add(
        {cat({r(digits(4)), B::literal("-"),
              r(b_.add({{d('0', '0'), d('1', '9')}, {d('1', '1'), d('0', '2')}})), B::literal("-"),
              r(b_.add({{d('0', '0'), d('1', '9')},
                        {d('1', '2'), d('0', '9')},
                        {d('3', '3'), d('0', '1')}}))})});
    const uint32_t hour = b_.add({{d('0', '1'), d('0', '9')}, {d('2', '2'), d('0', '3')}});
    const uint32_t minute = b_.add({{d('0', '5'), d('0', '9')}});
    const uint32_t offset =
        b_.add({B::literal("Z"), cat({{B::bytes('+', '+')}, r(hour), B::literal(":"), r(minute)}),
                cat({{B::bytes('-', '-')}, r(hour), B::literal(":"), r(minute)})});
    const uint32_t millis = b_.add({{}, cat({B::literal("."), r(digits(3))})});
    const uint32_t time = b_.add({cat(
        {r(hour), B::literal(":"), r(minute), B::literal(":"), r(minute), r(millis), r(offset)})});
    if (f == "date") return date;
    if (f == "time") return time;
    if (f == "date-time") return b_.add({cat({r(date), B::literal("T"), r(time)})});
    if (f == "uuid") {
      return b_.add({cat({r(b_.repeat(hex, 8, 8)), B::literal("-"), r(b_.repeat(hex, 4, 4)),
                          B::literal("-"), r(b_.repeat(hex, 4, 4)), B::literal("-"),
                          r(b_.repeat(hex, 4, 4)), B::literal("-"), r(b_.repeat(hex, 12, 12))})});
    }
    if (f == "email") {
      // Unbounded parts (no counters), so the parse state repeats and masks are memo hits.
      const uint32_t local = b_.repeat(b_.add({{d('a', 'z')},
                                               {d('A', 'Z')},
                                               {d('0', '9')},
                                               B::literal("_"),
                                               B::literal("%"),
                                               B::literal("+"),
                                               B::literal("-")}),
                                       1, std::nullopt);
      const uint32_t label = b_.repeat(
          b_.add({{d('a', 'z')}, {d('A', 'Z')}, {d('0', '9')}, B::literal("-")}), 1, std::nullopt);
      const uint32_t dotted_local =
          b_.repeat(b_.add({cat({B::literal("."), r(local)})}), 0, std::nullopt);
      const uint32_t dotted_label =
          b_.repeat(b_.add({cat({B::literal("."), r(label)})}), 1, std::nullopt);
      return b_.add({cat({r(local), r(dotted_local), B::literal("@"), r(label), r(dotted_label)})});
    }
    return chars_;  // other formats are annotations
  }

  // A format's strings as a pattern (the language of format()), for a format beside
  // minLength/maxLength; nullopt for formats that are annotations.
  static std::optional<std::string> format_pattern(const std::string& f) {
    const std::string date = R"(\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01]))";
    const std::string hour = "([01][0-9]|2[0-3])";
    const std::string time =
        hour + R"(:[0-5][0-9]:[0-5][0-9](\.\d{3})?(Z|[+-])" + hour + ":[0-5][0-9])";
    const std::string hex = "[0-9a-fA-F]";
    if (f == "date") return "^" + date + "$";
    if (f == "time") return "^" + time + "$";
    if (f == "date-time") return "^" + date + "T" + time + "$";
    if (f == "uuid")
      return "^" + hex + "{8}-" + hex + "{4}-" + hex + "{4}-" + hex + "{4}-" + hex + "{12}$";
    if (f == "email")
      return R"(^[a-zA-Z0-9_%+-]+(\.[a-zA-Z0-9_%+-]+)*@[a-zA-Z0-9-]+(\.[a-zA-Z0-9-]+)+$)";
    return std::nullopt;
  }

  uint32_t string(const ojson& s, const std::string& ptr) {
    if (s.contains("pattern") && s.contains("format"))
      throw Error("unsupported JSON schema keyword combination at " + where(ptr) +
                  ": pattern and format");
    const size_t min = s.contains("minLength") ? count_at(s, "minLength", ptr) : 0;
    std::optional<size_t> max;
    if (s.contains("maxLength")) max = count_at(s, "maxLength", ptr);
    if (max && *max < min) invalid(ptr, "maxLength < minLength");
    const bool lengths = min > 0 || max;
    std::optional<std::string> pattern;  // beside lengths
    if (s.contains("pattern")) {
      if (!s["pattern"].is_string()) invalid(child(ptr, "pattern"), "expected a string");
      if (!lengths) return quoted(compile_pattern(b_, s["pattern"].get<std::string>()));
      pattern = s["pattern"].get<std::string>();
    } else if (s.contains("format")) {
      if (!s["format"].is_string()) invalid(child(ptr, "format"), "expected a string");
      if (!lengths) return quoted(format(s["format"].get<std::string>()));
      pattern = format_pattern(s["format"].get<std::string>());
    }
    if (pattern) {
      // Both at once: the pattern's automaton with a character count.
      const auto rule = compile_pattern(b_, *pattern, min, max);
      if (!rule)
        invalid(ptr, "no string within minLength/maxLength matches " +
                         std::string(s.contains("pattern") ? "the pattern" : "the format"));
      return quoted(*rule);
    }
    if (!lengths) return string_;
    return quoted(b_.repeat(char_, min, max));
  }

  // ---- arrays ------------------------------------------------------------------------

  uint32_t array(const ojson& s, const std::string& ptr) {
    std::vector<uint32_t> prefix;  // each followed by space
    std::optional<uint32_t> rest;
    auto item = [&](const ojson& schema, const std::string& p) {
      return b_.add({{B::ref(compile(schema, p)), B::ref(space_)}});
    };
    auto tail_schema = [&](const char* key) {
      const auto& v = s[key];
      if (v.is_boolean() && !v.get<bool>()) return;
      rest = item(v, child(ptr, key));
    };
    const bool tuple_items = s.contains("items") && s["items"].is_array();
    if (s.contains("prefixItems") || tuple_items) {
      const char* key = tuple_items ? "items" : "prefixItems";
      for (size_t i = 0; i < s[key].size(); ++i)
        prefix.push_back(item(s[key][i], child(child(ptr, key), std::to_string(i))));
      const char* more = tuple_items ? "additionalItems" : "items";
      if (s.contains(more)) {
        tail_schema(more);
      } else {
        rest = item(true, ptr);
      }
    } else if (s.contains("items")) {
      tail_schema("items");
    } else {
      rest = item(true, ptr);
    }
    const size_t k = prefix.size();
    const size_t min = s.contains("minItems") ? count_at(s, "minItems", ptr) : 0;
    std::optional<size_t> max;
    if (s.contains("maxItems")) max = count_at(s, "maxItems", ptr);
    if (!rest) max = std::min(max.value_or(k), k);
    if (max && *max < min) invalid(ptr, "no array length satisfies minItems/maxItems/items");
    auto item_at = [&](size_t i) -> std::optional<uint32_t> {
      if (i < k) return prefix[i];
      return rest;
    };
    const size_t first_loop = std::max<size_t>({k, min, 1});
    if (max) b_.check_room(*max * 7);
    // tails[i]: what may follow once i items are out (i >= 1).
    const size_t last = max ? std::max<size_t>(*max, 1) : first_loop;
    std::vector<uint32_t> tails(last + 1);
    if (max) {
      tails[last] = b_.add({{}});
    } else {
      tails[last] = b_.declare();
      b_.define(tails[last], {{}, cat({B::literal(","), r(space_), r(*rest), r(tails[last])})});
    }
    for (size_t i = last; i-- > 1;) {
      std::vector<Seq> alts;
      if (i >= min) alts.emplace_back();
      if (auto it = item_at(i))
        alts.push_back(cat({B::literal(","), r(space_), r(*it), r(tails[i + 1])}));
      tails[i] = b_.add(std::move(alts));
    }
    std::vector<Seq> alts;
    if (min == 0) alts.push_back(B::literal("]"));
    if ((!max || *max >= 1) && item_at(0))
      alts.push_back(cat({r(*item_at(0)), r(tails[1]), B::literal("]")}));
    return b_.add({cat({B::literal("["), r(space_), r(b_.add(std::move(alts)))})});
  }

  // ---- objects -----------------------------------------------------------------------

  struct Trie {
    bool terminal = false;
    std::map<uint32_t, Trie> children;
  };

  // The rest of a key string (after the opening quote) that must not spell a name in `t`.
  uint32_t key_not_in(const Trie& t) {
    std::vector<Seq> alts;
    if (!t.terminal) alts.push_back(B::literal("\""));
    CodePointSet listed;
    for (const auto& [cp, next] : t.children) {
      alts.push_back({B::ref(json_char_rule(b_, {{cp, cp}})), B::ref(key_not_in(next))});
      listed.emplace_back(cp, cp);
    }
    const CodePointSet others = complement(listed);
    if (!others.empty())
      alts.push_back(cat({r(json_char_rule(b_, others)), r(chars_), B::literal("\"")}));
    return b_.add(std::move(alts));
  }

  uint32_t extra_key(const std::vector<std::string>& names, const std::string& ptr) {
    if (names.empty()) return string_;
    Trie root;
    for (const auto& name : names) {
      Trie* t = &root;
      const std::u32string cps = [&] {
        std::u32string out;
        for (size_t i = 0; i < name.size();) {
          const auto c = static_cast<unsigned char>(name[i]);
          const size_t n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
          uint32_t cp = n == 1 ? c : c & (0x7Fu >> n);
          for (size_t j = 1; j < n && i + j < name.size(); ++j)
            cp = (cp << 6) | (static_cast<unsigned char>(name[i + j]) & 0x3Fu);
          out.push_back(cp);
          i += n;
        }
        return out;
      }();
      if (cps.size() > kMaxNameLength) invalid(ptr, "property name longer than 1000 characters");
      for (char32_t cp : cps) t = &t->children[cp];
      t->terminal = true;
    }
    return b_.add({cat({B::literal("\""), r(key_not_in(root))})});
  }

  uint32_t object(const ojson& s, const std::string& ptr) {
    // A bare {"type":"object"} is any object (as llama.cpp); listed properties close it.
    if (!s.contains("properties") && !s.contains("additionalProperties") && !s.contains("required"))
      return any_object();
    struct Property {
      std::string name;
      uint32_t member;  // "name" space ":" space value space
      bool required;
    };
    std::set<std::string> required;
    if (s.contains("required")) {
      if (!s["required"].is_array()) invalid(child(ptr, "required"), "expected an array");
      for (const auto& n : s["required"]) {
        if (!n.is_string()) invalid(child(ptr, "required"), "expected strings");
        required.insert(n.get<std::string>());
      }
    }
    auto member = [&](uint32_t key, uint32_t value) {
      return b_.add({cat({r(key), r(space_), B::literal(":"), r(space_), r(value), r(space_)})});
    };
    std::vector<Property> props;
    std::vector<std::string> names;
    if (s.contains("properties")) {
      if (!s["properties"].is_object()) invalid(child(ptr, "properties"), "expected an object");
      for (const auto& [name, sub] : s["properties"].items()) {
        const std::string p = child(child(ptr, "properties"), name);
        if (sub.is_boolean() && !sub.get<bool>()) {
          if (required.contains(name)) invalid(p, "required property whose schema is false");
          names.push_back(name);  // never emitted, and no extra key may take its name
          continue;
        }
        const uint32_t key = b_.add({B::literal(ojson(name).dump())});
        props.push_back({name, member(key, compile(sub, p)), required.contains(name)});
        names.push_back(name);
      }
    }
    for (const auto& n : required)
      if (std::find(names.begin(), names.end(), n) == names.end())
        throw Error("unsupported JSON schema at " + where(ptr) + ": required property '" + n +
                    "' is not in properties");
    std::optional<uint32_t> extra;
    if (s.contains("additionalProperties")) {
      const auto& a = s["additionalProperties"];
      if (!(a.is_boolean() && !a.get<bool>())) {
        const uint32_t value = compile(a, child(ptr, "additionalProperties"));
        extra = member(extra_key(names, ptr), value);
      }
    }
    const Seq comma = cat({B::literal(","), r(space_)});
    // after[i]: properties i.. once something is out; first[i]: the same before anything.
    const size_t n = props.size();
    std::vector<uint32_t> after(n + 1), first(n + 1);
    if (extra) {
      after[n] = b_.declare();
      b_.define(after[n], {{}, cat({comma, r(*extra), r(after[n])})});
      first[n] = b_.add({{}, {B::ref(*extra), B::ref(after[n])}});
    } else {
      after[n] = first[n] = b_.add({{}});
    }
    for (size_t i = n; i-- > 0;) {
      std::vector<Seq> a{cat({comma, r(props[i].member), r(after[i + 1])})};
      std::vector<Seq> f{{B::ref(props[i].member), B::ref(after[i + 1])}};
      if (!props[i].required) {
        a.push_back(r(after[i + 1]));
        f.push_back(r(first[i + 1]));
      }
      after[i] = b_.add(std::move(a));
      first[i] = b_.add(std::move(f));
    }
    return b_.add({cat({B::literal("{"), r(space_), r(first[0]), B::literal("}")})});
  }

  const ojson& root_;
  GrammarBuilder b_;
  uint32_t space_, char_, chars_, string_, digit_, integer_, fraction_, number_;
  std::optional<uint32_t> value_, object_;
  std::unordered_map<std::string, uint32_t> refs_;
  int depth_ = 0;
};

}  // namespace

std::shared_ptr<const Grammar> compile_json_schema(const nlohmann::ordered_json& schema) {
  try {
    Compiler c(schema);
    const uint32_t root = c.compile_root();
    return std::move(c.builder()).build(root);
  } catch (const nlohmann::json::exception& e) {
    // e.g. a const string that is not UTF-8 (possible only in a json built in code).
    throw Error(std::string("invalid JSON schema: ") + e.what());
  }
}

std::shared_ptr<const Grammar> compile_json_schema(const nlohmann::json& schema) {
  // Converting recurses once per level: bound the depth first, without recursing.
  std::vector<std::pair<const nlohmann::json*, size_t>> open{{&schema, 0}};
  while (!open.empty()) {
    const auto [v, depth] = open.back();
    open.pop_back();
    if (depth > kMaxValueDepth)
      throw Error("JSON schema nested too deeply (over " + std::to_string(kMaxValueDepth) +
                  " levels)");
    if (v->is_structured())
      for (const auto& c : *v) open.emplace_back(&c, depth + 1);
  }
  return compile_json_schema(nlohmann::ordered_json(schema));
}

std::shared_ptr<const Grammar> json_object_grammar() {
  const nlohmann::ordered_json empty = nlohmann::ordered_json::object();
  Compiler c(empty);
  const uint32_t root = c.any_object();
  return std::move(c.builder()).build(root);
}

}  // namespace heron::grammar
