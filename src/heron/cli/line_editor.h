#pragma once
// Reads the chat's input lines with editing and history (libedit), keeping the history
// in a file between sessions.
#include <filesystem>
#include <optional>
#include <string>

namespace heron::cli {

class LineEditor {
 public:
  enum class Outcome { Line, Interrupted, EndOfInput };
  struct Input {
    Outcome outcome;
    std::string text;
  };

  // `history_file` is read now and written as lines are remembered; nullopt: no file.
  explicit LineEditor(std::optional<std::filesystem::path> history_file);
  LineEditor(const LineEditor&) = delete;
  LineEditor& operator=(const LineEditor&) = delete;

  // One line; Ctrl-C gives Interrupted (the partial line is dropped), Ctrl-D on an
  // empty line EndOfInput. Needs catch_interrupts() to have been called.
  Input read(const std::string& prompt);
  void remember(const std::string& line);

 private:
  std::optional<std::filesystem::path> history_file_;
};

}  // namespace heron::cli
