#pragma once
// Ollama endpoints backed by the model store: POST /api/create (NDJSON progress),
// DELETE /api/delete, POST /api/copy, GET /api/tags, POST /api/show.
#include <httplib.h>

#include "heron/server/context.h"

namespace heron::store {
class Store;
}

namespace heron::server {

void install_store_routes(httplib::Server& server, ServerContext& ctx, const store::Store& store);

}  // namespace heron::server
