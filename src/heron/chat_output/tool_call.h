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
  // The arguments as JSON text, in the model's key order; invalid UTF-8 (which a model's
  // detokenized text never has, but a caller's bytes may) becomes U+FFFD, never a throw.
  std::string arguments_json() const;
};

using ToolNames = std::set<std::string, std::less<>>;

// The function names of a request's `tools` (OpenAI's {"type": "function", "function":
// {"name"}} or a bare {"name"}); empty when there are none.
ToolNames tool_names(const nlohmann::ordered_json& tools);

// A call from `name` and `arguments` (an object, a JSON string of one, or absent: {}).
// nullopt when the name is not among `known` or the arguments are not an object.
std::optional<ToolCall> make_call(const nlohmann::ordered_json& name,
                                  const nlohmann::ordered_json* arguments, const ToolNames& known);

// The one call of `name` with `arguments`, as the list a CallParser returns; nullopt as
// make_call gives it.
std::optional<std::vector<ToolCall>> single_call(std::string_view name,
                                                 const nlohmann::ordered_json& arguments,
                                                 const ToolNames& known);

// {"name": .., "<args_key>": ..} (also "arguments" / "parameters", whichever is there).
std::optional<ToolCall> call_from_object(const nlohmann::ordered_json& object,
                                         const ToolNames& known);

// Parses JSON without throwing: nullopt for anything that is not one JSON value.
std::optional<nlohmann::ordered_json> parse_json(std::string_view text);

// Calls from one JSON object or an array of them; nullopt if any is not a valid call.
std::optional<std::vector<ToolCall>> calls_from_json(std::string_view text, const ToolNames& known);

// An argument written as text between tags (XML-style syntaxes): the templates write
// strings as they are and everything else as JSON, so text that parses as a JSON number,
// bool, null, object or array is that value, and anything else a string. (Without the
// tool's schema a string such as "42" comes back as the number.)
nlohmann::ordered_json tagged_argument(std::string_view text);

}  // namespace heron::chat_output
