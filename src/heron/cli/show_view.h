#pragma once
// How `heron show` and the chat's /show print an /api/show reply.
#include <ostream>

#include <nlohmann/json.hpp>

namespace heron::cli {

// Ollama's overview: Model (architecture, parameters, context and embedding length,
// quantization), Capabilities, Parameters, System, License.
void print_model_overview(std::ostream& out, const nlohmann::json& show);
// One text field of the reply ("modelfile", "parameters", ...) as it is.
void print_show_field(std::ostream& out, const nlohmann::json& show, const char* field);

}  // namespace heron::cli
