#include "heron/grammar/grammar.h"

#include "heron/core/error.h"

namespace heron::grammar {

GrammarBuilder::Seq GrammarBuilder::literal(std::string_view s) {
  Seq out;
  for (char c : s) {
    const auto b = static_cast<uint8_t>(c);
    out.push_back(bytes(b, b));
  }
  return out;
}

uint32_t GrammarBuilder::declare() {
  check_room(1);
  ++size_;
  rules_.emplace_back();
  return static_cast<uint32_t>(rules_.size() - 1);
}

void GrammarBuilder::check_room(size_t elements) const {
  if (elements > kMaxGrammarElements || size_ + elements > kMaxGrammarElements)
    throw Error("schema too large: its grammar would exceed " +
                std::to_string(kMaxGrammarElements) + " elements");
}

void GrammarBuilder::define(uint32_t rule, std::vector<Seq> alternatives) {
  size_t n = 0;
  for (const auto& a : alternatives) n += a.size() + 1;
  check_room(n);
  size_ += n;
  rules_[rule] = std::move(alternatives);
}

uint32_t GrammarBuilder::add(std::vector<Seq> alternatives) {
  std::string key;
  for (const auto& a : alternatives) {
    for (const auto& e : a) {
      key.push_back(static_cast<char>(e.kind));
      key.push_back(static_cast<char>(e.lo));
      key.push_back(static_cast<char>(e.hi));
      key.append(reinterpret_cast<const char*>(&e.rule), sizeof(e.rule));
    }
    key.push_back('|');
  }
  if (auto it = by_body_.find(key); it != by_body_.end()) return it->second;
  const uint32_t r = declare();
  define(r, std::move(alternatives));
  by_body_.emplace(std::move(key), r);
  return r;
}

uint32_t GrammarBuilder::repeat(uint32_t rule, size_t min, std::optional<size_t> max) {
  check_room(min + (max ? 4 * (*max - std::min(*max, min)) : 0));
  Seq head(min, ref(rule));
  if (!max) {
    const uint32_t star = declare();
    define(star, {{ref(rule), ref(star)}, {}});
    head.push_back(ref(star));
  } else if (*max > min) {
    // opt_k ::= "" | rule opt_{k-1}: at most k more.
    uint32_t opt = add({{}, {ref(rule)}});
    for (size_t k = 1; k < *max - min; ++k) opt = add({{}, {ref(rule), ref(opt)}});
    head.push_back(ref(opt));
  }
  return add({std::move(head)});
}

std::shared_ptr<const Grammar> GrammarBuilder::build(uint32_t root) && {
  const size_t n = rules_.size();
  for (size_t r = 0; r < n; ++r)
    if (!rules_[r]) throw Error("grammar rule " + std::to_string(r) + " is never defined");

  // Nullable rules, to a fixpoint.
  std::vector<uint8_t> nullable(n, 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < n; ++r) {
      if (nullable[r]) continue;
      for (const auto& alt : *rules_[r]) {
        bool all = true;
        for (const auto& e : alt) all = all && e.kind == Element::Kind::Rule && nullable[e.rule];
        if (all) {
          nullable[r] = 1;
          changed = true;
          break;
        }
      }
    }
  }
  // Left edges: r -> s when s can start r without a byte consumed before it.
  std::vector<std::vector<uint32_t>> left(n);
  for (size_t r = 0; r < n; ++r)
    for (const auto& alt : *rules_[r])
      for (const auto& e : alt) {
        if (e.kind != Element::Kind::Rule) break;
        left[r].push_back(e.rule);
        if (!nullable[e.rule]) break;
      }
  // Iterative DFS for a cycle (schemas can make very deep rule chains).
  std::vector<uint8_t> color(n, 0);  // 0 new, 1 on the path, 2 done
  for (size_t start = 0; start < n; ++start) {
    if (color[start]) continue;
    std::vector<std::pair<uint32_t, size_t>> path{{static_cast<uint32_t>(start), 0}};
    color[start] = 1;
    while (!path.empty()) {
      auto& [r, next] = path.back();
      if (next == left[r].size()) {
        color[r] = 2;
        path.pop_back();
        continue;
      }
      const uint32_t s = left[r][next++];
      if (color[s] == 1)
        throw Error(
            "schema is left-recursive: a rule reaches itself before any byte (a $ref cycle, "
            "or a pattern repeating what can be empty, like (a*)*)");
      if (color[s] == 0) {
        color[s] = 1;
        path.emplace_back(s, 0);
      }
    }
  }

  std::vector<Element> elements;
  elements.reserve(size_);
  std::vector<std::vector<uint32_t>> alternatives(n);
  for (size_t r = 0; r < n; ++r)
    for (auto& alt : *rules_[r]) {
      alternatives[r].push_back(static_cast<uint32_t>(elements.size()));
      elements.insert(elements.end(), alt.begin(), alt.end());
      elements.push_back(Element{});
    }
  return std::make_shared<const Grammar>(std::move(elements), std::move(alternatives), root);
}

}  // namespace heron::grammar
