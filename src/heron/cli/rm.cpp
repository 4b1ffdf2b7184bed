// `heron rm NAME...`: removes models from the store (DELETE /api/delete).
#include <iostream>

#include "heron/cli/api_client.h"
#include "heron/cli/args.h"
#include "heron/cli/commands.h"

namespace heron::cli {

int run_rm(const std::vector<std::string>& argv) {
  const std::vector<FlagSpec> flags = {{"help", false, "show this help"}};
  Args args("rm", flags, argv);
  if (args.has("help")) {
    std::cout << "heron rm NAME...: remove models from the store\n\n" << Args::usage("rm", flags);
    return 0;
  }
  if (args.positional().empty()) throw UsageError("give the names of the models to remove");
  const ApiClient client(heron_host());
  for (const auto& name : args.positional()) {
    client.del("/api/delete", {{"model", name}});
    std::cout << "deleted '" << name << "'\n";
  }
  return 0;
}

}  // namespace heron::cli
