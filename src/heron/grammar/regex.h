#pragma once
// JSON schema `pattern` (ECMA-262 / Python re subset) as a grammar rule for the content of
// a JSON string: literals, escapes (\d \w \s \D \W \S, escaped metacharacters, \n \t \r \f
// \v \xHH \uHHHH), '.', classes ([a-z_] and [^...]), groups ((...) and (?:...)),
// alternation, quantifiers (* + ? {n} {n,} {n,m}, a trailing lazy '?' ignored) and the
// anchors ^ and $ at the ends of a top-level branch. Search semantics, as jsonschema uses:
// a branch without ^ may be preceded by any characters, one without $ followed by any.
// \d \w \s and their negations are ASCII-only, a subset of what Unicode-aware engines
// match, so every string emitted matches there too.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "heron/grammar/grammar.h"

namespace heron::grammar {

// Throws heron::Error naming the pattern for anything outside the subset.
uint32_t compile_pattern(GrammarBuilder& b, std::string_view pattern);

// The strings of `pattern` that are also min..max characters long (code points, as JSON
// schema counts them; max nullopt: no upper bound), nullopt when there are none. Built as
// the product of the pattern's automaton with a character count (a rule per state and
// count), keeping only pairs from which an accepted end is still reachable, so a walk over
// the grammar never dead-ends. Throws heron::Error when the product would exceed
// kMaxGrammarElements.
std::optional<uint32_t> compile_pattern(GrammarBuilder& b, std::string_view pattern, size_t min,
                                        std::optional<size_t> max);

}  // namespace heron::grammar
