#include "heron/cli/answer_printer.h"

#include <sys/ioctl.h>
#include <unistd.h>

namespace heron::cli {

namespace {

int columns(const std::string& s) {  // code points; wide characters count as one
  int n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

}  // namespace

void AnswerPrinter::emit_word() {
  if (word_.empty()) return;
  const int w = columns(word_);
  if (column_ > 0 && column_ + w > width_) {
    out_ << "\n";
    column_ = 0;
  }
  out_ << word_;
  column_ += w;
  word_.clear();
}

void AnswerPrinter::write(const std::string& piece) {
  if (width_ <= 0) {
    out_ << piece << std::flush;
    return;
  }
  for (char c : piece) {
    if (c == '\n') {
      emit_word();
      out_ << '\n';
      column_ = 0;
    } else if (c == ' ') {
      emit_word();
      if (column_ + 1 <= width_ && column_ > 0) {
        out_ << ' ';
        ++column_;
      }
    } else {
      word_ += c;
      if (columns(word_) >= width_) emit_word();  // a word longer than the line
    }
  }
  out_ << std::flush;
}

void AnswerPrinter::flush() {
  emit_word();
  out_ << std::flush;
}

int wrap_width(bool wrap) {
  winsize ws{};
  if (!wrap || !isatty(STDOUT_FILENO) || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0) return 0;
  return ws.ws_col > 5 ? ws.ws_col - 5 : 0;  // Ollama leaves a margin too
}

}  // namespace heron::cli
