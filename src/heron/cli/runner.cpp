// `heron runner`: one model behind a loopback HTTP endpoint, started by `heron serve`.
// Prints {"port": N} on stdout once the model is loaded and the port is bound.
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <thread>

#include <httplib.h>

#include "heron/cli/args.h"
#include "heron/cli/commands.h"
#include "heron/cli/environment.h"
#include "heron/core/default_model.h"
#include "heron/model/encoder_loader.h"
#include "heron/runner/encoder_host.h"
#include "heron/runner/model_host.h"
#include "heron/runner/routes.h"
#include "heron/server/model_footprint.h"
#include "heron/spec/cost_file.h"
#include "heron/store/store.h"

namespace heron::cli {

namespace {

const std::vector<FlagSpec> kFlags = {
    {"model", true, "GGUF file or Hugging Face directory ('default': SmolLM2-135M)"},
    {"context", true,
     "context length when a request gives no num_ctx (default $HERON_CONTEXT_LENGTH or 4096)"},
    {"max-queue", true, "requests that may wait for the model before 503 (default 32)"},
    {"help", false, "show this help"},
};

// A byte size from the environment; unset or empty: nullopt.
std::optional<size_t> env_bytes(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  try {
    return server::parse_byte_size(v, std::string("$") + name);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
}

// HERON_CACHE_MEMORY, HERON_CACHE_DIR and HERON_CACHE_DISK (default: a quarter of the
// free space where the tier lives, at most 64 GiB).
runner::CacheSettings cache_settings() {
  runner::CacheSettings s;
  s.memory = env_bytes("HERON_CACHE_MEMORY");
  if (const char* dir = std::getenv("HERON_CACHE_DIR"); dir != nullptr && *dir != '\0') {
    s.dir = std::filesystem::path(dir);
    std::error_code ec;
    std::filesystem::create_directories(*s.dir, ec);
    const auto space = std::filesystem::space(*s.dir, ec);
    const size_t free_quarter = ec ? 0 : static_cast<size_t>(space.available / 4);
    s.disk = env_bytes("HERON_CACHE_DISK").value_or(std::min(free_quarter, size_t{64} << 30));
  }
  return s;
}

}  // namespace

int run_runner(const std::vector<std::string>& argv) {
  Args args("runner", kFlags, argv);
  if (args.has("help")) {
    std::cout << Args::usage("runner", kFlags)
              << "\nThe HTTP token comes from $HERON_RUNNER_TOKEN.\n";
    return 0;
  }
  if (!args.positional().empty()) {
    throw UsageError("unexpected argument '" + args.positional()[0] + "'");
  }
  const auto model = args.get("model");
  if (!model) throw UsageError("--model is required");
  const char* token = std::getenv("HERON_RUNNER_TOKEN");
  if (!token || !*token) throw UsageError("$HERON_RUNNER_TOKEN must be set");
  const char* env_context = std::getenv("HERON_CONTEXT_LENGTH");
  int64_t default_context = 4096;
  if (env_context && *env_context) {
    try {
      default_context = std::stoll(env_context);
    } catch (const std::exception&) {
      default_context = 0;
    }
    if (default_context < 1 || default_context > (1 << 20)) {
      throw UsageError("$HERON_CONTEXT_LENGTH must be an integer between 1 and 1048576");
    }
  }
  const int context = static_cast<int>(args.get_int("context", default_context, 1, 1 << 20));
  const int num_parallel = num_parallel_from_env();
  const int max_queue = static_cast<int>(args.get_int("max-queue", 32, 1, 1 << 16));

  signal(SIGPIPE, SIG_IGN);  // a server that hangs up is a cancellation, not a crash
  // SIGTERM (heron serve unloading the model) or SIGINT stops the HTTP server; the model
  // host then finishes what is queued on the MLX thread (the prefix cache's disk writes)
  // before the process exits. Blocked before any thread starts, so only `stopper` sees it.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  const std::filesystem::path path = builtin_model_path(*model).value_or(*model);
  runner::SpeculationSettings speculation;
  try {
    speculation.enabled = spec::speculation_enabled_from_env();
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  speculation.store_root = store::Store::default_root();
  // An embedding model's runner answers /embed; a generative model's /completion.
  std::optional<runner::EncoderHost> encoder;
  std::optional<runner::ModelHost> host;
  if (model::is_encoder_model(path)) {
    encoder.emplace(path, max_queue);
    encoder->load();
  } else {
    host.emplace(path, max_queue, context, cache_settings(), speculation, num_parallel);
    host->load();
  }
  httplib::Server server;
  // Each streaming request holds a thread; /status must always find one free.
  server.new_task_queue = [max_queue] {
    return new httplib::ThreadPool(static_cast<size_t>(max_queue) + 8);
  };
  server.set_payload_max_length(64 << 20);
  if (encoder) {
    runner::install_encoder_routes(server, *encoder, token);
  } else {
    runner::install_routes(server, *host, token);
  }
  const int port = server.bind_to_any_port("127.0.0.1");
  if (port <= 0) throw Error("cannot bind a port on 127.0.0.1");
  std::thread stopper([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    server.stop();
  });
  std::cout << "{\"port\": " << port << "}" << std::endl;
  const bool stopped_cleanly = server.listen_after_bind();
  // Wakes its sigwait (SIGTERM is blocked here) when we stopped for another reason.
  pthread_kill(stopper.native_handle(), SIGTERM);  // NOLINT(bugprone-bad-signal-to-kill-thread)
  stopper.join();
  if (!stopped_cleanly) throw Error("the runner's HTTP server stopped");
  return 0;
}

}  // namespace heron::cli
