#pragma once
// OpenAI's API: /v1/chat/completions, /v1/completions (SSE streams ending with
// [DONE]), /v1/models, /v1/models/{id}. Errors in OpenAI's {"error": {...}} shape.
namespace httplib {
class Server;
}

namespace heron::server {

struct ServerContext;

void install_openai_routes(httplib::Server& server, ServerContext& ctx);

}  // namespace heron::server
