#pragma once
// `heron run NAME` on a terminal: an interactive chat like `ollama run`'s, over
// /api/chat, with slash commands (/set, /show, /clear, /bye, /?) and """ multi-line
// input.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "heron/cli/api_client.h"

namespace heron::cli {

struct ChatSettings {
  std::string model;
  nlohmann::json options = nlohmann::json::object();
  std::optional<std::string> keep_alive;
  std::optional<std::string> system;
  std::optional<std::string> format;  // "json": every answer is a JSON object
  bool verbose = false;
  bool word_wrap = true;
};

// Runs until /bye or Ctrl-D; returns the exit code.
int run_chat(const ApiClient& client, ChatSettings settings);

}  // namespace heron::cli
