#include "heron/tokenizer/json_util.h"

#include "heron/core/error.h"

namespace heron::tokenizer {
namespace {

[[noreturn]] void fail(const char* key, const std::string& what, const char* expected) {
  throw Error("tokenizer: " + what + ": field '" + key + "' " + expected);
}

}  // namespace

const nlohmann::json& json_field(const nlohmann::json& obj, const char* key,
                                 const std::string& what) {
  if (!obj.is_object()) throw Error("tokenizer: " + what + " must be a JSON object");
  const auto it = obj.find(key);
  if (it == obj.end()) fail(key, what, "is missing");
  return *it;
}

std::string json_string(const nlohmann::json& obj, const char* key, const std::string& what) {
  const auto& v = json_field(obj, key, what);
  if (!v.is_string()) fail(key, what, "must be a string");
  return v.get<std::string>();
}

const nlohmann::json& json_array(const nlohmann::json& obj, const char* key,
                                 const std::string& what) {
  const auto& v = json_field(obj, key, what);
  if (!v.is_array()) fail(key, what, "must be an array");
  return v;
}

const nlohmann::json& json_object(const nlohmann::json& obj, const char* key,
                                  const std::string& what) {
  const auto& v = json_field(obj, key, what);
  if (!v.is_object()) fail(key, what, "must be an object");
  return v;
}

int64_t json_int(const nlohmann::json& obj, const char* key, const std::string& what) {
  const auto& v = json_field(obj, key, what);
  if (!v.is_number_integer()) fail(key, what, "must be an integer");
  return v.get<int64_t>();
}

bool json_bool_or(const nlohmann::json& obj, const char* key, bool fallback,
                  const std::string& what) {
  if (!obj.is_object()) throw Error("tokenizer: " + what + " must be a JSON object");
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) fail(key, what, "must be true or false");
  return it->get<bool>();
}

}  // namespace heron::tokenizer
