#pragma once
// Ollama options given on the command line (`--options`) or in the chat
// (`/set parameter NAME VALUE`), typed and checked here so that a typo is caught before
// it reaches the server.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace heron::cli {

// The typed value of one option: "temperature" "0.5" -> 0.5; "stop" takes every word.
// Throws Error naming the parameter for an unknown name or a bad value.
nlohmann::json parameter_value(const std::string& name, const std::vector<std::string>& words);
// Checks an options object (as --options gives it) like the server will.
void check_options(const nlohmann::json& options);

}  // namespace heron::cli
