#pragma once
// A `heron runner` child process: started with a fresh secret token in its
// environment, bound to a random loopback port it reports on stdout, dying with us
// (PR_SET_PDEATHSIG). Its stderr is forwarded to ours, and its last lines are kept to
// explain a failure.
#include <sys/types.h>

#include <chrono>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace heron::server {

class RunnerProcess {
 public:
  // Blocks until the runner reports its port; throws http::HttpError(500) with the
  // runner's own error when it fails to load or start within `timeout`.
  // `max_queue`: requests that may wait for the model before the runner answers 503.
  RunnerProcess(const std::filesystem::path& exe, const std::filesystem::path& model, int max_queue,
                std::chrono::seconds timeout);
  ~RunnerProcess();  // SIGTERM, then SIGKILL if it lingers; reaps the child
  RunnerProcess(const RunnerProcess&) = delete;
  RunnerProcess& operator=(const RunnerProcess&) = delete;

  int port() const { return port_; }
  const std::string& token() const { return token_; }
  pid_t pid() const { return pid_; }
  // False once the child has exited (reaps it).
  bool alive();
  // "was killed by signal 9 (Killed)" or "exited with status 1: <last stderr line>".
  std::string exit_description();

 private:
  void forward_stderr(int fd);
  std::string last_error_line();

  pid_t pid_ = -1;
  int port_ = 0;
  std::string token_;
  int stdout_fd_ = -1;
  std::mutex mu_;
  std::deque<std::string> stderr_tail_;
  std::thread stderr_thread_;
  bool exited_ = false;
  int wait_status_ = 0;
};

}  // namespace heron::server
