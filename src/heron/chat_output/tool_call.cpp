#include "heron/chat_output/tool_call.h"

namespace heron::chat_output {

using ojson = nlohmann::ordered_json;

std::string ToolCall::arguments_json() const {
  return arguments.dump(-1, ' ', false, ojson::error_handler_t::replace);
}

ToolNames tool_names(const ojson& tools) {
  ToolNames names;
  if (!tools.is_array()) return names;
  for (const auto& tool : tools) {
    if (!tool.is_object()) continue;
    const auto fn = tool.find("function");
    const ojson& holder = fn != tool.end() && fn->is_object() ? *fn : tool;
    if (const auto name = holder.find("name"); name != holder.end() && name->is_string()) {
      names.insert(name->get<std::string>());
    }
  }
  return names;
}

std::optional<ojson> parse_json(std::string_view text) {
  ojson value = ojson::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return std::nullopt;
  return value;
}

std::optional<ToolCall> make_call(const ojson& name, const ojson* arguments,
                                  const ToolNames& known) {
  if (!name.is_string() || !known.contains(name.get<std::string>())) return std::nullopt;
  ToolCall call{name.get<std::string>()};
  if (arguments == nullptr || arguments->is_null()) return call;
  if (arguments->is_object()) {
    call.arguments = *arguments;
  } else if (arguments->is_string()) {
    auto parsed = parse_json(arguments->get<std::string>());
    if (!parsed || !parsed->is_object()) return std::nullopt;
    call.arguments = std::move(*parsed);
  } else {
    return std::nullopt;
  }
  return call;
}

std::optional<std::vector<ToolCall>> single_call(std::string_view name, const ojson& arguments,
                                                 const ToolNames& known) {
  auto call = make_call(ojson(std::string(name)), &arguments, known);
  if (!call) return std::nullopt;
  return std::vector<ToolCall>{std::move(*call)};
}

std::optional<ToolCall> call_from_object(const ojson& object, const ToolNames& known) {
  if (!object.is_object()) return std::nullopt;
  const auto name = object.find("name");
  if (name == object.end()) return std::nullopt;
  const ojson* arguments = nullptr;
  for (const char* key : {"arguments", "parameters"}) {
    if (const auto it = object.find(key); it != object.end()) {
      arguments = &*it;
      break;
    }
  }
  return make_call(*name, arguments, known);
}

std::optional<std::vector<ToolCall>> calls_from_json(std::string_view text,
                                                     const ToolNames& known) {
  auto value = parse_json(text);
  if (!value) return std::nullopt;
  std::vector<ToolCall> calls;
  if (value->is_array()) {
    if (value->empty()) return std::nullopt;
    for (const auto& item : *value) {
      auto call = call_from_object(item, known);
      if (!call) return std::nullopt;
      calls.push_back(std::move(*call));
    }
    return calls;
  }
  auto call = call_from_object(*value, known);
  if (!call) return std::nullopt;
  calls.push_back(std::move(*call));
  return calls;
}

ojson tagged_argument(std::string_view text) {
  auto value = parse_json(text);
  if (value && !value->is_string()) return *value;
  return std::string(text);
}

}  // namespace heron::chat_output
