#pragma once
// Ctrl-C stops the current answer: in the interactive chat the program goes on, in
// `heron run NAME PROMPT` it then exits.
#include <atomic>

namespace heron::cli {

// Installs a SIGINT handler (no SA_RESTART, so a blocking read sees EINTR) that only
// raises the flag.
void catch_interrupts();
std::atomic<bool>& interrupted();

}  // namespace heron::cli
