#pragma once
// A context-free grammar over bytes: rules of alternatives, each a sequence of byte ranges
// and rule references. Repetition is expressed with helper rules (right recursion), so a
// matcher needs no other construct. Built by GrammarBuilder, immutable afterwards.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace heron::grammar {

struct Element {
  enum class Kind : uint8_t { Bytes, Rule, End };
  Kind kind = Kind::End;
  uint8_t lo = 0, hi = 0;  // Bytes: the inclusive range
  uint32_t rule = 0;       // Rule: the referenced rule
};

class Grammar {
 public:
  // `elements`: every alternative of every rule, each closed by an End element;
  // `alternatives[r]`: where rule r's alternatives start in `elements`.
  Grammar(std::vector<Element> elements, std::vector<std::vector<uint32_t>> alternatives,
          uint32_t root)
      : elements_(std::move(elements)), alternatives_(std::move(alternatives)), root_(root) {}
  const std::vector<Element>& elements() const { return elements_; }
  const std::vector<uint32_t>& alternatives(uint32_t rule) const { return alternatives_[rule]; }
  uint32_t root() const { return root_; }

 private:
  std::vector<Element> elements_;
  std::vector<std::vector<uint32_t>> alternatives_;
  uint32_t root_;
};

// Most elements one compiled grammar may hold: huge counts in a schema (maxItems,
// maxLength, {n,m}) end in an error instead of exhausting memory.
inline constexpr size_t kMaxGrammarElements = 1 << 20;

class GrammarBuilder {
 public:
  using Seq = std::vector<Element>;  // one alternative, without its End

  static Element bytes(uint8_t lo, uint8_t hi) { return {Element::Kind::Bytes, lo, hi, 0}; }
  static Element ref(uint32_t rule) { return {Element::Kind::Rule, 0, 0, rule}; }
  static Seq literal(std::string_view s);

  // A rule defined later (for recursion).
  uint32_t declare();
  void define(uint32_t rule, std::vector<Seq> alternatives);
  // declare + define; identical bodies share one rule.
  uint32_t add(std::vector<Seq> alternatives);
  // `rule` repeated min..max times (max: nullopt for unbounded).
  uint32_t repeat(uint32_t rule, size_t min, std::optional<size_t> max);
  // Throws heron::Error when `elements` more would exceed kMaxGrammarElements: checked
  // before building something large, so that it fails before taking the memory.
  void check_room(size_t elements) const;

  // Throws heron::Error for a left-recursive grammar (a rule that can reach itself without
  // consuming a byte), which no top-down matcher could run.
  std::shared_ptr<const Grammar> build(uint32_t root) &&;

 private:
  std::vector<std::optional<std::vector<Seq>>> rules_;
  std::unordered_map<std::string, uint32_t> by_body_;
  size_t size_ = 0;
};

}  // namespace heron::grammar
