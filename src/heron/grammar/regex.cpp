#include "heron/grammar/regex.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "heron/core/error.h"
#include "heron/grammar/code_points.h"

namespace heron::grammar {
namespace {

using Seq = GrammarBuilder::Seq;

constexpr int kMaxGroupDepth = 64;
constexpr size_t kMaxCount = 100000;

std::u32string decode_utf8(std::string_view s, std::string_view pattern) {
  std::u32string out;
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size())
      throw Error("pattern '" + std::string(pattern) + "' is not valid UTF-8");
    uint32_t cp = n == 1 ? c : c & (0x7F >> n);
    for (int k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    out.push_back(cp);
    i += n;
  }
  return out;
}

CodePointSet ascii_without(const CodePointSet& set) {
  CodePointSet out;
  uint32_t next = 0;
  for (auto [lo, hi] : normalized(set)) {
    if (lo > 0x7F) break;
    if (lo > next) out.emplace_back(next, lo - 1);
    next = hi + 1;
  }
  if (next <= 0x7F) out.emplace_back(next, 0x7F);
  return out;
}

struct Quantifier {
  size_t min = 0;
  std::optional<size_t> max;  // nullopt: unbounded
};

// A parsed pattern: an atom (a set of code points, or a group of alternatives, each a
// sequence) with the quantifiers that follow it, applied in order (a{2}{3}). Quantifiers
// are a list rather than nested nodes, so that a long run of them nests nothing.
struct Node {
  bool group = false;
  CodePointSet set;                     // !group
  std::vector<std::vector<Node>> alts;  // group
  std::vector<Quantifier> quantifiers;
};

class Parser {
 public:
  explicit Parser(std::string_view pattern)
      : pattern_(pattern), p_(decode_utf8(pattern, pattern)) {}

  // The whole pattern as one group; search semantics: a branch without ^ or $ gets "any
  // characters" before or after it.
  Node top() {
    Node any{false, any_code_point(), {}, {Quantifier{0, std::nullopt}}};
    Node out{true, {}, {}, {}};
    while (true) {
      const bool start = eat('^');
      std::vector<Node> seq;
      if (!start) seq.push_back(any);
      bool end = false;
      while (i_ < p_.size() && p_[i_] != '|') {
        if (eat('$')) {
          if (i_ < p_.size() && p_[i_] != '|') fail("'$' before the end of a branch");
          end = true;
          break;
        }
        seq.push_back(quantified());
      }
      if (!end) seq.push_back(any);
      out.alts.push_back(std::move(seq));
      if (!eat('|')) break;
    }
    if (i_ != p_.size()) fail("unbalanced ')'");
    return out;
  }

  [[noreturn]] void fail(const std::string& why) const {
    throw Error("unsupported pattern '" + std::string(pattern_) + "': " + why);
  }

 private:
  bool eat(char32_t c) {
    if (i_ < p_.size() && p_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }

  Node alternation() {
    Node out{true, {}, {}, {}};
    do {
      std::vector<Node> seq;
      while (i_ < p_.size() && p_[i_] != '|' && p_[i_] != ')') seq.push_back(quantified());
      out.alts.push_back(std::move(seq));
    } while (eat('|'));
    return out;
  }

  size_t number() {
    size_t n = 0;
    const size_t start = i_;
    while (i_ < p_.size() && p_[i_] >= '0' && p_[i_] <= '9') {
      n = n * 10 + (p_[i_++] - '0');
      if (n > kMaxCount)
        throw Error("schema too large: pattern count over " + std::to_string(kMaxCount) + " in '" +
                    std::string(pattern_) + "'");
    }
    if (i_ == start) fail("a count in {} is not a number");
    return n;
  }

  Node quantified() {
    Node a = atom();
    while (i_ < p_.size()) {
      size_t min = 0;
      std::optional<size_t> max;
      if (eat('*')) {
      } else if (eat('+')) {
        min = 1;
      } else if (eat('?')) {
        max = 1;
      } else if (p_[i_] == '{' && i_ + 1 < p_.size() && p_[i_ + 1] >= '0' && p_[i_ + 1] <= '9') {
        ++i_;
        min = number();
        if (eat(',')) {
          if (i_ < p_.size() && p_[i_] != '}') max = number();
        } else {
          max = min;
        }
        if (!eat('}')) fail("unterminated {n,m}");
        if (max && *max < min) fail("{n,m} with m < n");
      } else {
        break;
      }
      eat('?');  // lazy: the same language
      a.quantifiers.push_back({min, max});
    }
    return a;
  }

  static Node set(CodePointSet s) { return Node{false, std::move(s), {}, {}}; }

  Node atom() {
    if (i_ >= p_.size()) fail("missing atom");
    const char32_t c = p_[i_++];
    switch (c) {
      case '(': {
        if (++depth_ > kMaxGroupDepth) fail("groups nested too deeply");
        if (eat('?') && !eat(':')) fail("only (?:...) groups are supported");
        Node r = alternation();
        if (!eat(')')) fail("unbalanced '('");
        --depth_;
        return r;
      }
      case '[':
        return set(char_class());
      case '.':
        return set(complement({{'\n', '\n'}}));
      case '\\':
        return set(escape(nullptr));
      case '^':
      case '$':
        fail("anchors are supported only at the ends of a top-level branch");
      case '*':
      case '+':
      case '?':
        fail("nothing to repeat");
      case ')':
        fail("unbalanced ')'");
    }
    return set({{c, c}});
  }

  uint32_t hex(int digits) {
    uint32_t v = 0;
    for (int k = 0; k < digits; ++k) {
      if (i_ >= p_.size()) fail("truncated hex escape");
      const char32_t h = p_[i_++];
      const int d = h >= '0' && h <= '9'   ? static_cast<int>(h - '0')
                    : h >= 'a' && h <= 'f' ? static_cast<int>(h - 'a' + 10)
                    : h >= 'A' && h <= 'F' ? static_cast<int>(h - 'A' + 10)
                                           : -1;
      if (d < 0) fail("bad hex escape");
      v = v * 16 + static_cast<uint32_t>(d);
    }
    return v;
  }

  // After a '\'. `wide`: set when a class escape (\d \w \s or negation) was read, whose
  // negation in a [^...] must stay within ASCII (see regex.h).
  CodePointSet escape(bool* wide) {
    if (i_ >= p_.size()) fail("trailing '\\'");
    const char32_t c = p_[i_++];
    CodePointSet digit{{'0', '9'}};
    CodePointSet word{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
    CodePointSet space{{'\t', '\r'}, {' ', ' '}};
    if (wide && (c == 'd' || c == 'w' || c == 's' || c == 'D' || c == 'W' || c == 'S'))
      *wide = true;
    switch (c) {
      case 'd':
        return digit;
      case 'w':
        return word;
      case 's':
        return space;
      case 'D':
        return ascii_without(digit);
      case 'W':
        return ascii_without(word);
      case 'S':
        return {{0x21, 0x7E}};
      case 'n':
        return {{'\n', '\n'}};
      case 't':
        return {{'\t', '\t'}};
      case 'r':
        return {{'\r', '\r'}};
      case 'f':
        return {{'\f', '\f'}};
      case 'v':
        return {{'\v', '\v'}};
      case 'x': {
        const uint32_t v = hex(2);
        return {{v, v}};
      }
      case 'u': {
        const uint32_t v = hex(4);
        return {{v, v}};
      }
    }
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
      fail(std::string("escape \\") + static_cast<char>(c));
    return {{c, c}};
  }

  // After '['.
  CodePointSet char_class() {
    const bool negated = eat('^');
    bool wide = false;
    CodePointSet set;
    bool first = true;
    while (true) {
      if (i_ >= p_.size()) fail("unterminated '['");
      if (p_[i_] == ']' && !first) {
        ++i_;
        break;
      }
      first = false;
      CodePointSet item;
      if (eat('\\')) {
        item = escape(&wide);
      } else {
        item = {{p_[i_], p_[i_]}};
        ++i_;
      }
      if (item.size() == 1 && item[0].first == item[0].second && i_ + 1 < p_.size() &&
          p_[i_] == '-' && p_[i_ + 1] != ']') {
        ++i_;
        uint32_t hi;
        if (eat('\\')) {
          const CodePointSet e = escape(&wide);
          if (e.size() != 1 || e[0].first != e[0].second) fail("class range ends in a class");
          hi = e[0].first;
        } else {
          hi = p_[i_++];
        }
        if (hi < item[0].first) fail("class range out of order");
        item[0].second = hi;
      }
      set.insert(set.end(), item.begin(), item.end());
    }
    if (!negated) return normalized(std::move(set));
    return wide ? ascii_without(set) : complement(set);
  }

  std::string_view pattern_;
  std::u32string p_;
  size_t i_ = 0;
  int depth_ = 0;
};

// The pattern as grammar rules, node by node.
uint32_t emit(GrammarBuilder& b, const Node& n) {
  uint32_t rule;
  if (n.group) {
    std::vector<Seq> alts;
    for (const auto& seq : n.alts) {
      Seq refs;
      for (const auto& item : seq) refs.push_back(GrammarBuilder::ref(emit(b, item)));
      alts.push_back(std::move(refs));
    }
    rule = b.add(std::move(alts));
  } else {
    rule = json_char_rule(b, n.set);
  }
  for (const auto& q : n.quantifiers) rule = b.repeat(rule, q.min, q.max);
  return rule;
}

// A Thompson NFA of the pattern over code points: every quantifier copied out ({2,4}: two
// copies and two optional ones), so it is finite and its size capped.
class Nfa {
 public:
  Nfa(const Parser& parser, size_t max_states) : parser_(parser), max_states_(max_states) {}

  uint32_t state() {
    if (eps.size() >= max_states_)
      throw Error(
          "schema too large: the pattern's automaton with minLength/maxLength would "
          "exceed " +
          std::to_string(kMaxGrammarElements) + " elements");
    eps.emplace_back();
    steps.emplace_back();
    return static_cast<uint32_t>(eps.size() - 1);
  }

  // Adds `n` from state `from` and returns its end state. No part ever adds an edge into
  // the state it starts from, so parts may share their start state.
  uint32_t add(const Node& n, uint32_t from) { return quantified(n, n.quantifiers.size(), from); }

  std::vector<std::vector<uint32_t>> eps;                         // epsilon edges
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> steps;  // (index in sets, target)
  std::vector<CodePointSet> sets;

 private:
  // `n` with its first `k` quantifiers.
  uint32_t quantified(const Node& n, size_t k, uint32_t from) {
    if (k == 0) return atom(n, from);
    if (k > 16) parser_.fail("more than 16 quantifiers in a row beside minLength/maxLength");
    const Quantifier& q = n.quantifiers[k - 1];
    uint32_t s = from;
    for (size_t i = 0; i < q.min; ++i) s = quantified(n, k - 1, s);
    if (!q.max) {
      const uint32_t loop = state();
      eps[s].push_back(loop);
      const uint32_t e = quantified(n, k - 1, loop);
      eps[e].push_back(loop);
      return loop;
    }
    const uint32_t end = state();
    eps[s].push_back(end);
    for (size_t i = q.min; i < *q.max; ++i) {
      s = quantified(n, k - 1, s);
      eps[s].push_back(end);
    }
    return end;
  }

  uint32_t atom(const Node& n, uint32_t from) {
    const uint32_t end = state();
    if (!n.group) {
      sets.push_back(n.set);
      steps[from].emplace_back(static_cast<uint32_t>(sets.size() - 1), end);
      return end;
    }
    for (const auto& seq : n.alts) {
      uint32_t s = state();
      eps[from].push_back(s);
      for (const auto& item : seq) s = add(item, s);
      eps[s].push_back(end);
    }
    return end;
  }

  const Parser& parser_;
  size_t max_states_;
};

}  // namespace

uint32_t compile_pattern(GrammarBuilder& b, std::string_view pattern) {
  return emit(b, Parser(pattern).top());
}

std::optional<uint32_t> compile_pattern(GrammarBuilder& b, std::string_view pattern, size_t min,
                                        std::optional<size_t> max) {
  Parser parser(pattern);
  const Node top = parser.top();
  Nfa nfa(parser, kMaxGrammarElements);
  const uint32_t start = nfa.state();
  const uint32_t final_state = nfa.add(top, start);

  // Without epsilon edges: the states a character step enters (and the start), each with
  // the steps and acceptance of its epsilon closure; steps to one target share one set.
  const size_t n = nfa.eps.size();
  std::vector<uint32_t> index(n, UINT32_MAX), states{start};
  index[start] = 0;
  for (const auto& out : nfa.steps)
    for (auto [set, target] : out)
      if (index[target] == UINT32_MAX) {
        index[target] = static_cast<uint32_t>(states.size());
        states.push_back(target);
      }
  const size_t m = states.size();
  std::vector<std::vector<std::pair<CodePointSet, uint32_t>>> next(m);  // (set, state index)
  std::vector<uint8_t> accepting(m, 0);
  std::vector<uint32_t> seen(n, UINT32_MAX), todo;
  size_t work = 0;  // closure steps, capped: nested optional parts make closures long
  for (uint32_t q = 0; q < m; ++q) {
    std::vector<std::pair<uint32_t, CodePointSet>> by_target;  // target -> set
    todo.assign(1, states[q]);
    seen[states[q]] = q;
    while (!todo.empty()) {
      const uint32_t p = todo.back();
      todo.pop_back();
      if (++work > 16 * kMaxGrammarElements)
        throw Error("schema too large: pattern '" + std::string(pattern) +
                    "' is too ambiguous to combine with minLength/maxLength");
      if (p == final_state) accepting[q] = 1;
      for (auto [set, target] : nfa.steps[p]) {
        const CodePointSet& cps = nfa.sets[set];
        if (cps.empty()) continue;
        const uint32_t to = index[target];  // clang 14 lambdas cannot capture a binding
        auto it = std::find_if(by_target.begin(), by_target.end(),
                               [&](const auto& e) { return e.first == to; });
        if (it == by_target.end()) {
          by_target.emplace_back(to, cps);
        } else {
          it->second.insert(it->second.end(), cps.begin(), cps.end());
        }
      }
      for (uint32_t e : nfa.eps[p])
        if (seen[e] != q) {
          seen[e] = q;
          todo.push_back(e);
        }
    }
    for (auto& [target, set] : by_target) next[q].emplace_back(normalized(std::move(set)), target);
  }

  // The product with a character count c: 0..max, or 0..min where c == min stands for "min
  // or more" without a max. live[c * m + q]: an accepted end is reachable from (q, c), so no
  // path into a dead end is ever offered.
  const size_t levels = (max ? *max : min) + 1;
  if (levels > kMaxGrammarElements / m)
    throw Error("schema too large: pattern '" + std::string(pattern) +
                "' with minLength/maxLength would exceed " + std::to_string(kMaxGrammarElements) +
                " grammar elements");
  auto step = [&](size_t c) -> std::optional<size_t> {
    if (max) return c < *max ? std::optional<size_t>(c + 1) : std::nullopt;
    return std::min(c + 1, min);
  };
  std::vector<uint8_t> live(levels * m, 0);
  if (!max) {
    // The top level loops into itself: states that reach acceptance at all.
    for (bool changed = true; changed;) {
      changed = false;
      for (uint32_t q = 0; q < m; ++q) {
        if (live[min * m + q]) continue;
        bool ok = accepting[q];
        for (const auto& [set, t] : next[q]) ok = ok || live[min * m + t];
        if (ok) live[min * m + q] = changed = true;
      }
    }
  }
  for (size_t c = max ? levels : levels - 1; c-- > 0;)
    for (uint32_t q = 0; q < m; ++q) {
      bool ok = accepting[q] && c >= min;
      if (const auto nc = step(c))
        for (const auto& [set, t] : next[q]) ok = ok || live[*nc * m + t];
      live[c * m + q] = ok;
    }
  if (!live[0]) return std::nullopt;

  std::vector<uint32_t> rule(levels * m, 0);
  for (size_t i = 0; i < levels * m; ++i)
    if (live[i]) rule[i] = b.declare();
  std::map<CodePointSet, uint32_t> chars;
  for (size_t c = 0; c < levels; ++c)
    for (uint32_t q = 0; q < m; ++q) {
      if (!live[c * m + q]) continue;
      std::vector<Seq> alts;
      if (accepting[q] && c >= min) alts.emplace_back();
      if (const auto nc = step(c))
        for (const auto& [set, t] : next[q]) {
          if (!live[*nc * m + t]) continue;
          auto it = chars.find(set);
          if (it == chars.end()) it = chars.emplace(set, json_char_rule(b, set)).first;
          alts.push_back({GrammarBuilder::ref(it->second), GrammarBuilder::ref(rule[*nc * m + t])});
        }
      b.define(rule[c * m + q], std::move(alts));
    }
  return rule[0];
}

}  // namespace heron::grammar
