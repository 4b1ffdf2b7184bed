#pragma once
// Embeddings: Ollama's /api/embed (and the older /api/embeddings) and OpenAI's
// /v1/embeddings, answered by an embedding model's runner (POST /embed).
namespace httplib {
class Server;
}

namespace heron::server {

struct ServerContext;

void install_embed_routes(httplib::Server& server, ServerContext& ctx);

}  // namespace heron::server
