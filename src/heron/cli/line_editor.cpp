#include "heron/cli/line_editor.h"

#include <cstdlib>

// libedit's readline-compatible interface (BSD licensed); pkg-config adds its include dir.
#include <readline.h>

#include "heron/cli/interrupt.h"

namespace heron::cli {

namespace {

constexpr int kHistoryLines = 1000;

}  // namespace

LineEditor::LineEditor(std::optional<std::filesystem::path> history_file)
    : history_file_(std::move(history_file)) {
  rl_catch_signals = 0;  // our SIGINT handler interrupts the read instead
  using_history();
  stifle_history(kHistoryLines);
  if (history_file_) read_history(history_file_->c_str());
}

LineEditor::Input LineEditor::read(const std::string& prompt) {
  interrupted().store(false);
  char* line = readline(prompt.c_str());
  if (interrupted().exchange(false)) {
    std::free(line);
    return {Outcome::Interrupted, ""};
  }
  if (!line) return {Outcome::EndOfInput, ""};
  std::string text(line);
  std::free(line);
  return {Outcome::Line, std::move(text)};
}

void LineEditor::remember(const std::string& line) {
  if (line.empty()) return;
  add_history(line.c_str());
  if (history_file_) write_history(history_file_->c_str());
}

}  // namespace heron::cli
