// `heron serve`: the Ollama- and OpenAI-compatible HTTP server. Models run in
// `heron runner` child processes managed by the runner pool.
#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <thread>

#include <httplib.h>

#include "heron/cli/args.h"
#include "heron/cli/commands.h"
#include "heron/cli/environment.h"
#include "heron/cli/host.h"
#include "heron/http/json_fields.h"
#include "heron/http/lifo_thread_pool.h"
#include "heron/http/request_guard.h"
#include "heron/http/responses.h"
#include "heron/server/context.h"
#include "heron/server/embed_api.h"
#include "heron/server/metrics_api.h"
#include "heron/server/model_footprint.h"
#include "heron/server/ollama_api.h"
#include "heron/server/openai_api.h"
#include "heron/server/server_metrics.h"
#include "heron/server/store_api.h"
#include "heron/store/store.h"

namespace heron::cli {

namespace {

const std::vector<FlagSpec> kFlags = {{"help", false, "show this help"}};

size_t env_size(const char* name, size_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  try {
    return std::stoul(v);
  } catch (const std::exception&) {
    throw UsageError(std::string("$") + name + " must be a positive integer");
  }
}

// HERON_MAX_MEMORY, or 90% of physical memory: room for the OS and the server itself.
uint64_t max_model_memory() {
  if (const char* v = std::getenv("HERON_MAX_MEMORY"); v && *v) {
    try {
      return server::parse_byte_size(v, "$HERON_MAX_MEMORY");
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
  }
  const auto pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * page / 10 * 9 : 0;
}

// HERON_MAX_QUEUE: requests that may wait per model (the runner's --max-queue) before 503.
int max_queue() {
  const size_t n = env_size("HERON_MAX_QUEUE", 32);
  if (n < 1 || n > (1 << 16)) throw UsageError("$HERON_MAX_QUEUE must be between 1 and 65536");
  return static_cast<int>(n);
}

// Errors under /v1/ in OpenAI's shape, the rest in Ollama's.
http::ErrorWriter errors_for(const std::string& path) {
  return server::is_openai_path(path) ? server::send_openai_error : http::send_error;
}

http::GuardConfig guard_config(const std::string& listen_host) {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  const char* origins = std::getenv("HERON_ORIGINS");
  return {http::is_loopback_bind(listen_host), name, http::OriginPolicy(origins ? origins : ""),
          errors_for};
}

}  // namespace

int run_serve(const std::vector<std::string>& argv) {
  Args args("serve", kFlags, argv);
  if (args.has("help")) {
    std::cout << Args::usage("serve", kFlags) << "\n" << environment_help();
    return 0;
  }
  if (!args.positional().empty()) {
    throw UsageError("unexpected argument '" + args.positional()[0] + "'");
  }
  const HostAddress address = heron_host();
  server::KeepAlive keep_alive;
  try {
    keep_alive = server::default_keep_alive();
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  // One malloc arena for the whole server, set before its threads start. Its live heap is
  // small (heaptrack: 0.5 MiB at peak under the 8-client soak, zlib's state for a gzip'd
  // response the largest part), but glibc gives threads up to 8 arenas per core and each
  // keeps the pages freed in it: 16 arenas held 2.4 MiB for it, one holds about 1 MiB. The
  // server mostly waits on sockets and runners; one arena lock is no bottleneck.
  mallopt(M_ARENA_MAX, 1);
  // A client that hangs up must not kill the server with SIGPIPE.
  signal(SIGPIPE, SIG_IGN);
  // SIGINT/SIGTERM stop the server cleanly (runners are stopped with the pool).
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  store::Store model_store(store::Store::default_root());
  server::StoreResolver resolver(model_store);
  server::RunnerPool pool({std::filesystem::read_symlink("/proc/self/exe"),
                           env_size("HERON_MAX_LOADED_MODELS", 3), max_model_memory(),
                           std::chrono::seconds(env_size("HERON_LOAD_TIMEOUT", 300)), max_queue()});
  num_parallel_from_env();  // each runner reads it: a bad value stops serve here
  server::ServerMetrics metrics;
  server::ServerContext ctx{pool, resolver, keep_alive, &metrics};
  httplib::Server http_server;
  http_server.new_task_queue = [] { return new http::LifoThreadPool(64); };
  http::install_request_guard(http_server, guard_config(address.host));
  http_server.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty() || res.status < 400) return;
    errors_for(req.path)(res, res.status,
                         http::rejection_message(res.status, req.method, req.path));
  });
  server::install_ollama_routes(http_server, ctx);
  server::install_store_routes(http_server, ctx, model_store);
  server::install_openai_routes(http_server, ctx);
  server::install_embed_routes(http_server, ctx);
  server::install_metrics_route(http_server, ctx);
  // httplib calls its logger once per answered request, refusals and 404s included (after
  // a streamed body has been sent).
  http_server.set_logger([&metrics](const httplib::Request& req, const httplib::Response& res) {
    metrics.count_request(req.path, res.status);
  });
  if (!http_server.bind_to_port(address.host, address.port)) {
    throw Error("cannot listen on " + address.host + ":" + std::to_string(address.port));
  }
  std::thread stopper([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    http_server.stop();
  });
  std::cerr << "heron serve: listening on http://" << address.host << ":" << address.port
            << std::endl;
  http_server.listen_after_bind();
  if (stopper.joinable()) {
    // Wakes its sigwait (SIGTERM is blocked here) when we stopped for another reason.
    pthread_kill(stopper.native_handle(), SIGTERM);  // NOLINT(bugprone-bad-signal-to-kill-thread)
    stopper.join();
  }
  return 0;
}

}  // namespace heron::cli
