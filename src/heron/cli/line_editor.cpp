#include "heron/cli/line_editor.h"

#include <langinfo.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <clocale>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

// libedit's readline-compatible interface (BSD licensed); pkg-config adds its include dir.
#include <readline.h>

#include "heron/cli/interrupt.h"

namespace heron::cli {

namespace {

constexpr int kHistoryLines = 1000;

// One byte of input, or false at end of input or once Ctrl-C was pressed. SIGINT is
// blocked between the flag check and the wait, and ppoll unblocks it atomically, so a
// Ctrl-C can never slip in unnoticed while the editor is about to wait.
bool read_byte(int fd, unsigned char& c) {
  sigset_t sigint, unblocked;
  sigemptyset(&sigint);
  sigaddset(&sigint, SIGINT);
  while (true) {
    pthread_sigmask(SIG_BLOCK, &sigint, &unblocked);
    if (interrupted().load()) {
      pthread_sigmask(SIG_SETMASK, &unblocked, nullptr);
      return false;
    }
    pollfd p{fd, POLLIN, 0};
    const int ready = ppoll(&p, 1, nullptr, &unblocked);
    pthread_sigmask(SIG_SETMASK, &unblocked, nullptr);
    if (ready < 0) continue;  // EINTR: look at the flag again
    const ssize_t n = ::read(fd, &c, 1);
    if (n == 1) return true;
    if (n == 0 || (errno != EINTR && errno != EAGAIN)) return false;
  }
}

// libedit's getc hook: one code point (libedit stores its return value as a wchar_t, so
// UTF-8 is decoded here), -1 for end of input or Ctrl-C.
int read_code_point(FILE* in) {
  const int fd = fileno(in);
  unsigned char lead = 0;
  if (!read_byte(fd, lead)) return -1;
  const int extra = lead < 0x80         ? 0
                    : (lead >> 5) == 6  ? 1
                    : (lead >> 4) == 14 ? 2
                    : (lead >> 3) == 30 ? 3
                                        : -1;
  if (extra < 0) return 0xFFFD;
  uint32_t cp = extra == 0 ? lead : lead & (0x3Fu >> extra);
  for (int i = 0; i < extra; ++i) {
    unsigned char c = 0;
    if (!read_byte(fd, c)) return -1;
    if ((c & 0xC0) != 0x80) return 0xFFFD;
    cp = (cp << 6) | (c & 0x3Fu);
  }
  return static_cast<int>(cp);
}

// libedit turns the line's wide characters back into bytes with the locale's encoding:
// make that UTF-8, whatever the environment says.
void use_utf8_ctype() {
  std::setlocale(LC_CTYPE, "");
  if (std::strcmp(nl_langinfo(CODESET), "UTF-8") != 0) std::setlocale(LC_CTYPE, "C.UTF-8");
}

}  // namespace

LineEditor::LineEditor(std::optional<std::filesystem::path> history_file)
    : history_file_(std::move(history_file)) {
  use_utf8_ctype();
  rl_catch_signals = 0;  // our SIGINT handler raises a flag; read_byte() acts on it
  rl_getc_function = read_code_point;
  using_history();
  stifle_history(kHistoryLines);
  if (history_file_) read_history(history_file_->c_str());
}

LineEditor::Input LineEditor::read(const std::string& prompt) {
  interrupted().store(false);  // a Ctrl-C that stopped an answer is spent
  char* line = readline(prompt.c_str());
  if (!line) {
    return {interrupted().exchange(false) ? Outcome::Interrupted : Outcome::EndOfInput, ""};
  }
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
