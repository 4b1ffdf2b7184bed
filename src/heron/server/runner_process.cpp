#include "heron/server/runner_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <iostream>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>

#include "heron/http/http_error.h"

extern char** environ;

namespace heron::server {

namespace {

std::string random_token() {
  std::random_device rd;
  static const char* hex = "0123456789abcdef";
  std::string t;
  for (int i = 0; i < 64; ++i) t.push_back(hex[rd() & 15]);
  return t;
}

// Reads one line from fd before `deadline`; nullopt on EOF or timeout.
std::optional<std::string> read_line(int fd, std::chrono::steady_clock::time_point deadline) {
  std::string line;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char c = 0;
    const ssize_t n = read(fd, &c, 1);
    if (n <= 0) return std::nullopt;
    if (c == '\n') return line;
    line.push_back(c);
  }
}

}  // namespace

RunnerProcess::RunnerProcess(const std::filesystem::path& exe, const std::filesystem::path& model,
                             int max_queue, std::chrono::seconds timeout)
    : token_(random_token()) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    throw http::HttpError(500, std::string("cannot create a pipe: ") + std::strerror(errno));
  }
  // Everything the child needs is prepared before fork: only async-signal-safe calls after.
  std::vector<std::string> args = {exe.string(),   "runner",      "--model",
                                   model.string(), "--max-queue", std::to_string(max_queue)};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_strings = {"HERON_RUNNER_TOKEN=" + token_};
  for (char** e = environ; *e; ++e) {
    if (std::strncmp(*e, "HERON_RUNNER_TOKEN=", 19) != 0) env_strings.emplace_back(*e);
  }
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  const pid_t parent = getpid();

  pid_ = fork();
  if (pid_ < 0) throw http::HttpError(500, std::string("cannot fork: ") + std::strerror(errno));
  if (pid_ == 0) {
    // Fires when the forking thread ends: an HTTP pool thread, which lives as long as
    // the server.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the parent died before prctl
    dup2(out[1], 1);
    dup2(err[1], 2);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  stdout_fd_ = out[0];
  stderr_thread_ = std::thread([this, fd = err[0]] { forward_stderr(fd); });

  auto line = read_line(stdout_fd_, std::chrono::steady_clock::now() + timeout);
  try {
    if (!line) throw std::runtime_error("no port");
    port_ = nlohmann::json::parse(*line).at("port").get<int>();
  } catch (const std::exception&) {
    std::string why;
    if (line) {
      why = "it printed '" + *line + "' instead of its port";
    } else if (alive()) {
      why = "it did not start within " + std::to_string(timeout.count()) + " seconds";
    }
    kill(pid_, SIGKILL);
    {
      std::lock_guard lock(mu_);
      if (!exited_) waitpid(pid_, &wait_status_, 0);
      exited_ = true;
    }
    stderr_thread_.join();  // its last words explain the failure
    close(stdout_fd_);
    if (why.empty()) why = exit_description();
    throw http::HttpError(500,
                          "the model runner for " + model.string() + " failed to start: " + why);
  }
}

RunnerProcess::~RunnerProcess() {
  if (alive()) {
    // Up to 10 s to finish what it has queued (the prefix cache's disk writes).
    kill(pid_, SIGTERM);
    for (int i = 0; i < 500 && alive(); ++i) usleep(20000);
    if (alive()) kill(pid_, SIGKILL);
  }
  if (!exited_) {
    waitpid(pid_, &wait_status_, 0);
    exited_ = true;
  }
  if (stderr_thread_.joinable()) stderr_thread_.join();
  if (stdout_fd_ >= 0) close(stdout_fd_);
}

bool RunnerProcess::alive() {
  std::lock_guard lock(mu_);
  if (exited_) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    exited_ = true;
    wait_status_ = status;
  }
  return !exited_;
}

std::string RunnerProcess::exit_description() {
  if (alive()) return "it is still running";
  std::lock_guard lock(mu_);
  if (WIFSIGNALED(wait_status_)) {
    const int sig = WTERMSIG(wait_status_);
    return "it was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  std::string why = "it exited with status " + std::to_string(WEXITSTATUS(wait_status_));
  if (!stderr_tail_.empty()) why += ": " + stderr_tail_.back();
  return why;
}

void RunnerProcess::forward_stderr(int fd) {
  std::string line;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] != '\n') {
        line.push_back(buf[i]);
        continue;
      }
      std::cerr << "runner[" << pid_ << "]: " << line << std::endl;
      std::lock_guard lock(mu_);
      stderr_tail_.push_back(std::move(line));
      if (stderr_tail_.size() > 20) stderr_tail_.pop_front();
      line.clear();
    }
  }
  close(fd);
}

}  // namespace heron::server
