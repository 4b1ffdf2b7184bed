#pragma once
// The runner's HTTP endpoints (GET /status, POST /completion, /tokenize, /detokenize),
// all behind `Authorization: Bearer <token>`.
#include <string>

namespace httplib {
class Server;
}

namespace heron::runner {

class ModelHost;

void install_routes(httplib::Server& server, ModelHost& host, const std::string& token);

}  // namespace heron::runner
