#pragma once
// Ctrl-C in the interactive chat stops the current answer, not the program.
#include <atomic>

namespace heron::cli {

// Installs a SIGINT handler (no SA_RESTART, so a blocking read sees EINTR) that only
// raises the flag.
void catch_interrupts();
std::atomic<bool>& interrupted();

}  // namespace heron::cli
