#pragma once
// Sets of Unicode code points and their JSON string encoding as grammar rules: a string's
// characters are chosen as code points (by a pattern, a format or "any"), and the grammar
// emits each as the bytes that JSON text carries for it (UTF-8, or an escape).
#include <cstdint>
#include <utility>
#include <vector>

#include "heron/grammar/grammar.h"

namespace heron::grammar {

// Sorted, disjoint, non-adjacent inclusive ranges.
using CodePointSet = std::vector<std::pair<uint32_t, uint32_t>>;

inline constexpr uint32_t kMaxCodePoint = 0x10FFFF;

CodePointSet normalized(CodePointSet set);
// All scalar values (no surrogates) not in `set`.
CodePointSet complement(const CodePointSet& set);
// Every Unicode scalar value.
CodePointSet any_code_point();

// One character of `set` as it appears inside a JSON string: `"` and `\` as \" and \\,
// controls as \n, \t, ... or \u00XX, everything else as UTF-8. One encoding per code
// point, so two different strings never produce the same bytes. `other_escapes` also
// takes \/ and \uXXXX (no surrogates): for "any character", where the encoding is free.
uint32_t json_char_rule(GrammarBuilder& b, const CodePointSet& set, bool other_escapes = false);

}  // namespace heron::grammar
