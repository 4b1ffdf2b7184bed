// `heron runner`: one model behind a loopback HTTP endpoint, started by `heron serve`.
// Prints {"port": N} on stdout once the model is loaded and the port is bound.
#include <signal.h>

#include <cstdlib>
#include <iostream>

#include <httplib.h>

#include "heron/cli/args.h"
#include "heron/cli/commands.h"
#include "heron/core/default_model.h"
#include "heron/runner/model_host.h"
#include "heron/runner/routes.h"

namespace heron::cli {

namespace {

const std::vector<FlagSpec> kFlags = {
    {"model", true, "GGUF file or Hugging Face directory ('default': SmolLM2-135M)"},
    {"context", true,
     "context length when a request gives no num_ctx (default $HERON_CONTEXT_LENGTH or 4096)"},
    {"max-queue", true, "requests that may wait for the model before 503 (default 32)"},
    {"help", false, "show this help"},
};

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
  const int max_queue = static_cast<int>(args.get_int("max-queue", 32, 1, 1 << 16));

  signal(SIGPIPE, SIG_IGN);  // a server that hangs up is a cancellation, not a crash
  const std::filesystem::path path =
      *model == "default" ? default_model_path() : std::filesystem::path(*model);
  runner::ModelHost host(path, max_queue, context);
  host.load();
  httplib::Server server;
  // Each streaming request holds a thread; /status must always find one free.
  server.new_task_queue = [max_queue] {
    return new httplib::ThreadPool(static_cast<size_t>(max_queue) + 8);
  };
  server.set_payload_max_length(64 << 20);
  runner::install_routes(server, host, token);
  const int port = server.bind_to_any_port("127.0.0.1");
  if (port <= 0) throw Error("cannot bind a port on 127.0.0.1");
  std::cout << "{\"port\": " << port << "}" << std::endl;
  if (!server.listen_after_bind()) throw Error("the runner's HTTP server stopped");
  return 0;
}

}  // namespace heron::cli
