#pragma once
// OpenAI's API: /v1/chat/completions, /v1/completions (SSE streams ending with
// [DONE]), /v1/models, /v1/models/{id}. Errors in OpenAI's {"error": {...}} shape.
#include <string>

namespace httplib {
class Server;
struct Response;
}  // namespace httplib

namespace heron::server {

struct ServerContext;

void install_openai_routes(httplib::Server& server, ServerContext& ctx);

// Paths under /v1/, whose errors (from any layer) take OpenAI's shape.
bool is_openai_path(const std::string& path);
void send_openai_error(httplib::Response& res, int status, const std::string& message);

}  // namespace heron::server
