#pragma once
// Streams answer text to a terminal, wrapping at word boundaries to its width (as
// `ollama run` does); without wrapping the text passes through unchanged.
#include <ostream>
#include <string>

namespace heron::cli {

class AnswerPrinter {
 public:
  // width 0: no wrapping.
  AnswerPrinter(std::ostream& out, int width) : out_(out), width_(width) {}
  void write(const std::string& piece);
  // Prints what is held back (the last word).
  void flush();

 private:
  void emit_word();

  std::ostream& out_;
  int width_;
  int column_ = 0;
  std::string word_;  // the word being received, not yet placed
};

// The terminal's width when stdout is one and wrapping is wanted, else 0.
int wrap_width(bool wrap);

}  // namespace heron::cli
