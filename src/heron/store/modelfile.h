#pragma once
// Modelfile parser (Ollama's format plus DRAFT): one instruction per line, keywords in
// any case, `#` comments, values bare, "quoted" (with \" and \\ escapes) or in """triple
// quotes""" spanning lines. Errors name the source and line.
//
//   FROM <path or model>        (required, once)
//   DRAFT <path or model>       (at most once)
//   PARAMETER <name> <value>    (sampling and context options; stop may repeat)
//   TEMPLATE <jinja>            SYSTEM <text>           LICENSE <text> (may repeat)
//   MESSAGE <system|user|assistant> <text>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace heron::store {

struct ModelfileMessage {
  std::string role;
  std::string content;
};

// Everything a model carries besides its weights, shared by Modelfiles and the JSON form
// of /api/create.
struct ModelSettings {
  nlohmann::json parameters = nlohmann::json::object();  // Ollama option names -> values
  std::optional<std::string> chat_template;
  std::optional<std::string> system;
  std::vector<ModelfileMessage> messages;
  std::vector<std::string> licenses;

  nlohmann::json to_json() const;
  static ModelSettings from_json(const nlohmann::json& j);
};

struct Modelfile {
  std::string from;
  std::optional<std::string> draft;
  ModelSettings settings;
};

// Throws heron::Error "SOURCE:LINE: problem". Without `require_from` a Modelfile may
// lack FROM (the JSON form of /api/create can give it).
Modelfile parse_modelfile(const std::string& text, const std::string& source = "Modelfile",
                          bool require_from = true);

// Adds one PARAMETER to `parameters` after checking the name and value (value given as
// text from a Modelfile, or as JSON from a request). Throws heron::Error naming it.
void add_parameter(nlohmann::json& parameters, const std::string& name,
                   const nlohmann::json& value);
void add_parameter_text(nlohmann::json& parameters, const std::string& name,
                        const std::string& text);

// MESSAGE roles a Modelfile may use.
bool is_message_role(const std::string& role);

// A Modelfile that recreates `settings` on top of FROM `from` (for /api/show).
std::string render_modelfile(const std::string& from, const ModelSettings& settings,
                             const std::optional<std::string>& draft = std::nullopt);

}  // namespace heron::store
