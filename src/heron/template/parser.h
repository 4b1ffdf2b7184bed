#pragma once
// Parses tokens into a Program following jinja2's grammar and operator precedence
// (jinja2/parser.py): statements if/for/set/macro/call/filter/with/raw, the loopcontrols
// break/continue, transformers' `generation` tag; expressions from conditional expressions
// down to filters, tests, calls, subscripts and literals.
#include <string>

#include "heron/template/ast.h"

namespace heron::chat::jinja {

// Throws heron::Error naming line and column on a syntax error.
Program parse(const std::string& source);

// jinja2 rejects unknown filters and tests when it compiles a template, except inside
// `if` statements and conditional expressions, where they fail only when evaluated.
void check_filters_and_tests(const Program& program);

}  // namespace heron::chat::jinja
