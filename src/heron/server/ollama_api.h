#pragma once
// Ollama's API: /api/generate, /api/chat, /api/tags, /api/ps, /api/show, /api/version,
// GET and HEAD /. Field names, types and NDJSON framing as Ollama's docs/api.md.
namespace httplib {
class Server;
}

namespace heron::server {

struct ServerContext;

void install_ollama_routes(httplib::Server& server, ServerContext& ctx);

}  // namespace heron::server
