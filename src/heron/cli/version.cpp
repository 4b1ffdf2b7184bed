// `heron --version`: this client's version and, like `ollama --version`, the version of
// the server that answers at $HERON_HOST.
#include <iostream>

#include "heron/cli/api_client.h"
#include "heron/cli/commands.h"
#include "heron/core/version.h"

namespace heron::cli {

int print_version() {
  const ApiClient client(heron_host());
  std::string server_version;
  try {
    if (client.reachable(1000)) server_version = client.get("/api/version").value("version", "");
  } catch (const std::exception&) {
  }
  if (server_version.empty()) {
    std::cout << "Warning: could not connect to a running heron server at "
              << client.address().url() << "\n";
  } else {
    std::cout << "heron version is " << server_version << "\n";
  }
  if (server_version != heron::version()) {
    std::cout << "Warning: client version is " << heron::version() << "\n";
  }
  return 0;
}

}  // namespace heron::cli
