// `heron cp SRC DST`: copies a model under a new name (POST /api/copy).
#include <iostream>

#include "heron/cli/api_client.h"
#include "heron/cli/args.h"
#include "heron/cli/commands.h"

namespace heron::cli {

int run_cp(const std::vector<std::string>& argv) {
  const std::vector<FlagSpec> flags = {{"help", false, "show this help"}};
  Args args("cp", flags, argv);
  if (args.has("help")) {
    std::cout << "heron cp SOURCE DESTINATION: copy a model under a new name\n\n"
              << Args::usage("cp", flags);
    return 0;
  }
  if (args.positional().size() != 2) throw UsageError("give a source and a destination name");
  const auto& src = args.positional()[0];
  const auto& dst = args.positional()[1];
  ApiClient(heron_host()).post("/api/copy", {{"source", src}, {"destination", dst}});
  std::cout << "copied '" << src << "' to '" << dst << "'\n";
  return 0;
}

}  // namespace heron::cli
