#pragma once
// Typed field access for tokenizer.json / tokenizer_config.json / GGUF metadata with
// errors that say which part of the file is wrong. `what` names the enclosing object.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace heron::tokenizer {

const nlohmann::json& json_field(const nlohmann::json& obj, const char* key,
                                 const std::string& what);
std::string json_string(const nlohmann::json& obj, const char* key, const std::string& what);
const nlohmann::json& json_array(const nlohmann::json& obj, const char* key,
                                 const std::string& what);
const nlohmann::json& json_object(const nlohmann::json& obj, const char* key,
                                  const std::string& what);
int64_t json_int(const nlohmann::json& obj, const char* key, const std::string& what);
// Missing or null keys give `fallback`; any other non-bool value is an error.
bool json_bool_or(const nlohmann::json& obj, const char* key, bool fallback,
                  const std::string& what);

}  // namespace heron::tokenizer
