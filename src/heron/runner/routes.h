#pragma once
// The runner's HTTP endpoints (GET /status, POST /completion or /embed, /tokenize, /detokenize),
// all behind `Authorization: Bearer <token>`.
#include <string>

namespace httplib {
class Server;
}

namespace heron::runner {

class ModelHost;
class EncoderHost;

// A generative model's runner: POST /completion.
void install_routes(httplib::Server& server, ModelHost& host, const std::string& token);
// An embedding model's runner: POST /embed ({"input": [text or token ids], "truncate"} ->
// {"embeddings", "prompt_eval_count", "prompt_eval_duration"}).
void install_encoder_routes(httplib::Server& server, EncoderHost& host, const std::string& token);

}  // namespace heron::runner
