#pragma once
// One function call the model asked for, read back out of its text, and the checks every
// output syntax shares: the name must be one of the request's tools and the arguments an
// object (a JSON string holding one is accepted, as some models write it).
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace heron::chat_output {

struct ToolCall {
  std::string name;
  nlohmann::ordered_json arguments = nlohmann::ordered_json::object();
  bool operator==(const ToolCall&) const = default;
};

using ToolNames = std::set<std::string, std::less<>>;

// The function names of a request's `tools` (OpenAI's {"type": "function", "function":
// {"name"}} or a bare {"name"}); empty when there are none.
ToolNames tool_names(const nlohmann::ordered_json& tools);

// A call from `name` and `arguments` (an object, a JSON string of one, or absent: {}).
// nullopt when the name is not among `known` or the arguments are not an object.
std::optional<ToolCall> make_call(const nlohmann::ordered_json& name,
                                  const nlohmann::ordered_json* arguments, const ToolNames& known);

// {"name": .., "<args_key>": ..} (also "arguments" / "parameters", whichever is there).
std::optional<ToolCall> call_from_object(const nlohmann::ordered_json& object,
                                         const ToolNames& known);

// Parses JSON without throwing: nullopt for anything that is not one JSON value.
std::optional<nlohmann::ordered_json> parse_json(std::string_view text);

// Calls from one JSON object or an array of them; nullopt if any is not a valid call.
std::optional<std::vector<ToolCall>> calls_from_json(std::string_view text, const ToolNames& known);

}  // namespace heron::chat_output
