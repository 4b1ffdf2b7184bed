#pragma once
// Splits template source into tokens exactly as jinja2's lexer does in the transformers
// environment: newlines normalized and one trailing newline dropped, trim_blocks (a block
// or comment tag eats the newline after it), lstrip_blocks (whitespace between a line start
// and a block/comment tag is dropped), `-` and `+` modifiers, raw blocks, comments.
#include <cstdint>
#include <string>
#include <vector>

namespace heron::chat::jinja {

enum class Tok { Data, VarBegin, VarEnd, BlockBegin, BlockEnd, Name, String, Int, Float, Op, Eof };

struct Token {
  Tok type;
  std::string text;  // data, name, string value (unescaped) or operator
  int64_t int_value = 0;
  double float_value = 0;
  int line = 1;
  int col = 1;
};

// Throws heron::Error (a syntax error naming line and column) on malformed input.
std::vector<Token> tokenize(const std::string& source);

// "chat template syntax error at line L, column C: message"
[[noreturn]] void syntax_error(int line, int col, const std::string& message);

}  // namespace heron::chat::jinja
