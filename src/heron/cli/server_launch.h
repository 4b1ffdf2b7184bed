#pragma once
// `heron run` works without a separate `heron serve`: when nothing answers at
// $HERON_HOST it starts one in the background, as the Ollama app does.
#include "heron/cli/api_client.h"

namespace heron::cli {

// A client for $HERON_HOST. If no server answers there and the address is on this
// machine, starts `heron serve` detached (its log in heron_home()/serve.log) and waits
// up to $HERON_START_TIMEOUT seconds (30) for it to answer; a clear error otherwise.
ApiClient connect_or_start_server();

}  // namespace heron::cli
