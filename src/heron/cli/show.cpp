// `heron show NAME`: what the server knows of a model (POST /api/show).
#include <iostream>

#include "heron/cli/api_client.h"
#include "heron/cli/args.h"
#include "heron/cli/commands.h"
#include "heron/cli/show_view.h"

namespace heron::cli {

namespace {

const std::vector<FlagSpec> kFlags = {
    {"modelfile", false, "print the model's Modelfile"},
    {"parameters", false, "print the model's parameters"},
    {"template", false, "print the model's prompt template"},
    {"system", false, "print the model's system message"},
    {"license", false, "print the model's license"},
    {"help", false, "show this help"},
};

}  // namespace

int run_show(const std::vector<std::string>& argv) {
  Args args("show", kFlags, argv);
  if (args.has("help")) {
    std::cout << "heron show NAME: what the server knows of a model\n\n"
              << Args::usage("show", kFlags);
    return 0;
  }
  if (args.positional().size() != 1) throw UsageError("give one model name");
  const char* field = nullptr;
  for (const char* f : {"modelfile", "parameters", "template", "system", "license"}) {
    if (!args.has(f)) continue;
    if (field) {
      throw UsageError(
          "only one of --modelfile, --parameters, --template, --system, --license can be given");
    }
    field = f;
  }
  const auto reply = ApiClient(heron_host()).post("/api/show", {{"model", args.positional()[0]}});
  if (field) {
    print_show_field(std::cout, reply, field);
  } else {
    print_model_overview(std::cout, reply);
  }
  return 0;
}

}  // namespace heron::cli
