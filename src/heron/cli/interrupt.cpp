#include "heron/cli/interrupt.h"

#include <signal.h>

namespace heron::cli {

namespace {

std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the flag is set in a signal handler");

void on_sigint(int) {
  g_interrupted.store(true);
}

}  // namespace

void catch_interrupts() {
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  sigaction(SIGINT, &sa, nullptr);
}

std::atomic<bool>& interrupted() {
  return g_interrupted;
}

}  // namespace heron::cli
