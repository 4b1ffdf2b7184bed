#include "heron/cli/server_launch.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>

#include "heron/cli/args.h"

namespace heron::cli {

namespace {

namespace fs = std::filesystem;

bool is_local(const std::string& host) {
  return host == "127.0.0.1" || host == "localhost" || host == "0.0.0.0" || host == "::1" ||
         host == "[::1]";
}

int start_timeout_seconds() {
  const char* v = std::getenv("HERON_START_TIMEOUT");
  if (!v || !*v) return 30;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < 1 || n > 3600) {
    throw UsageError("$HERON_START_TIMEOUT must be a number of seconds from 1 to 3600");
  }
  return static_cast<int>(n);
}

// fork + setsid + exec of this binary's `serve`, stdin from /dev/null, output to `log`.
// Returns the pid; the child outlives us (re-parented to init when we exit).
pid_t spawn_serve(const fs::path& log) {
  const std::string exe = fs::read_symlink("/proc/self/exe").string();
  const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) throw Error("cannot open the server log " + log.string());
  const pid_t pid = fork();
  if (pid < 0) {
    ::close(log_fd);
    throw Error("cannot start `heron serve`: fork failed");
  }
  if (pid == 0) {
    setsid();  // its own session: a Ctrl-C in our terminal does not reach it
    const int null_fd = ::open("/dev/null", O_RDONLY);
    dup2(null_fd, 0);
    dup2(log_fd, 1);
    dup2(log_fd, 2);
    execl(exe.c_str(), exe.c_str(), "serve", static_cast<char*>(nullptr));
    _exit(127);
  }
  ::close(log_fd);
  return pid;
}

}  // namespace

ApiClient connect_or_start_server() {
  ApiClient client(heron_host());
  if (client.reachable()) return client;
  const HostAddress& a = client.address();
  if (!is_local(a.host)) {
    throw ConnectionError("could not connect to heron at " + a.url() +
                          " (a server on another machine is not started from here)");
  }
  const int timeout = start_timeout_seconds();
  const fs::path home = heron_home();
  std::error_code ec;
  fs::create_directories(home, ec);
  if (ec) throw Error("cannot create " + home.string() + ": " + ec.message());
  const fs::path log = home / "serve.log";
  std::cerr << "heron: no server answers at " << a.url()
            << "; starting `heron serve` (log: " << log.string() << ")" << std::endl;
  const pid_t pid = spawn_serve(log);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout);
  while (std::chrono::steady_clock::now() < deadline) {
    if (client.reachable(500)) return client;
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      throw Error("`heron serve` exited before it answered at " + a.url() + "; see " +
                  log.string());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  throw Error("`heron serve` did not answer at " + a.url() + " within " + std::to_string(timeout) +
              " s; see " + log.string());
}

}  // namespace heron::cli
