// `heron list` / `heron ls`: the models the server can run (GET /api/tags), as Ollama
// shows them.
#include <iostream>

#include "heron/cli/api_client.h"
#include "heron/cli/args.h"
#include "heron/cli/commands.h"
#include "heron/cli/human_format.h"
#include "heron/cli/model_fields.h"

namespace heron::cli {

int run_list(const std::vector<std::string>& argv) {
  const std::vector<FlagSpec> flags = {{"help", false, "show this help"}};
  Args args("list", flags, argv);
  if (args.has("help")) {
    std::cout << "heron list (alias ls): the models the server can run\n\n"
              << Args::usage("list", flags);
    return 0;
  }
  if (!args.positional().empty()) {
    throw UsageError("unexpected argument '" + args.positional()[0] + "'");
  }
  const auto reply = ApiClient(heron_host()).get("/api/tags");
  std::vector<std::vector<std::string>> rows = {{"NAME", "ID", "SIZE", "MODIFIED"}};
  for (const auto& m : models_of(reply)) {
    const auto modified = parse_rfc3339(m.value("modified_at", ""));
    rows.push_back({model_name(m), short_digest(m), human_bytes(m.value("size", int64_t{0})),
                    modified ? human_time(*modified) : "Never"});
  }
  print_table(std::cout, rows);
  return 0;
}

}  // namespace heron::cli
