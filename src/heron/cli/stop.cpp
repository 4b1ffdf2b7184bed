// `heron stop NAME`: unloads a running model now, as Ollama does: a generate request
// with keep_alive 0.
#include <iostream>

#include "heron/cli/api_client.h"
#include "heron/cli/args.h"
#include "heron/cli/commands.h"

namespace heron::cli {

int run_stop(const std::vector<std::string>& argv) {
  const std::vector<FlagSpec> flags = {{"help", false, "show this help"}};
  Args args("stop", flags, argv);
  if (args.has("help")) {
    std::cout << "heron stop NAME: unload a running model\n\n" << Args::usage("stop", flags);
    return 0;
  }
  if (args.positional().size() != 1) throw UsageError("give one model name");
  const auto& name = args.positional()[0];
  try {
    ApiClient(heron_host()).post("/api/generate", {{"model", name}, {"keep_alive", 0}});
  } catch (const ServerError& e) {
    if (e.status() == 404) throw Error("couldn't find model '" + name + "' to stop");
    throw;
  }
  return 0;
}

}  // namespace heron::cli
