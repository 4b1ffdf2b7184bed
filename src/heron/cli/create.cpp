// `heron create NAME -f Modelfile [--quantize T] [--draft-quantize T]`: imports a model
// into the local store (HERON_MODELS) in-process; the server's POST /api/create runs
// the same code.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <iostream>
#include <sstream>

#include "heron/cli/args.h"
#include "heron/cli/commands.h"
#include "heron/core/worker.h"
#include "heron/store/create.h"
#include "heron/store/progress_view.h"

namespace heron::cli {

namespace {

const std::vector<FlagSpec> kFlags = {
    {"file", true, "the Modelfile (also -f; default ./Modelfile)"},
    {"quantize", true, "int4|int8|mxfp4|mxfp8|nvfp4 (q4, q8 are aliases)"},
    {"draft-quantize", true, "quantization of the DRAFT model, same types"},
    {"help", false, "show this help"},
};

std::atomic<bool> g_cancel{false};

void on_interrupt(int) {
  g_cancel.store(true);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot read Modelfile '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

int run_create(const std::vector<std::string>& argv) {
  std::vector<std::string> expanded;
  for (const auto& a : argv) expanded.push_back(a == "-f" ? "--file" : a);
  Args args("create", kFlags, expanded);
  if (args.has("help")) {
    std::cout << Args::usage("create", kFlags) << "\nNAME is [namespace/]name[:tag].\n"
              << "\nenvironment: HERON_MODELS (~/.heron/models)\n";
    return 0;
  }
  if (args.positional().size() != 1) throw UsageError("give exactly one model NAME");
  const std::string file = args.get_or("file", "Modelfile");
  store::CreateRequest req;
  req.name = args.positional()[0];
  req.modelfile = store::parse_modelfile(read_text(file), file);
  req.base_dir = std::filesystem::absolute(file).parent_path();
  req.quantize = args.get("quantize");
  req.draft_quantize = args.get("draft-quantize");

  struct sigaction sa = {};
  sa.sa_handler = on_interrupt;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  store::ProgressView view(stderr, isatty(STDERR_FILENO) != 0);
  Worker worker;  // MLX work runs on one thread that owns its streams
  try {
    worker
        .submit([&] {
          store::Store store(store::Store::default_root());
          store::create_model(
              store, req, [&](const store::Progress& p) { view(p); }, &g_cancel);
        })
        .get();
  } catch (...) {
    view.finish();
    throw;
  }
  view.finish();
  return 0;
}

}  // namespace heron::cli
