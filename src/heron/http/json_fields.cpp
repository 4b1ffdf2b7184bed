#include "heron/http/json_fields.h"

#include <cmath>
#include <sstream>

#include "heron/http/http_error.h"

namespace heron::http {

namespace {
constexpr int kMaxBodyDepth = 128;
}  // namespace

namespace {

template <class Json>
Json parse_json_body(const std::string& body) {
  Json j;
  try {
    // No API nests deeply; a bound keeps every later recursive walk of the tree shallow.
    j = Json::parse(body, [](int depth, nlohmann::json::parse_event_t, Json&) {
      if (depth >= kMaxBodyDepth) {  // depth counts the containers around this one
        throw bad_request("the request body is nested more than " + std::to_string(kMaxBodyDepth) +
                          " levels deep");
      }
      return true;
    });
  } catch (const nlohmann::json::exception& e) {  // parse_error, out_of_range for 1e999
    throw bad_request(std::string("invalid JSON in the request body: ") + e.what());
  }
  if (!j.is_object()) throw bad_request("the request body must be a JSON object");
  return j;
}

}  // namespace

json parse_body(const std::string& body) {
  return parse_json_body<json>(body);
}

nlohmann::ordered_json parse_ordered_body(const std::string& body) {
  return parse_json_body<nlohmann::ordered_json>(body);
}

std::string dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

const json* field(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

namespace {

[[noreturn]] void wrong_type(const std::string& name, const char* want, const json& got) {
  throw bad_request(name + " must be " + want + ", got " + std::string(got.type_name()));
}

std::string fmt(double x) {
  std::ostringstream s;
  s << x;
  return s.str();
}

}  // namespace

std::optional<bool> get_bool(const json& obj, const char* key, const std::string& name) {
  const json* v = field(obj, key);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) wrong_type(name, "a boolean", *v);
  return v->get<bool>();
}

std::optional<std::string> get_string(const json& obj, const char* key, const std::string& name) {
  const json* v = field(obj, key);
  if (!v) return std::nullopt;
  if (!v->is_string()) wrong_type(name, "a string", *v);
  return v->get<std::string>();
}

std::optional<int64_t> get_int(const json& obj, const char* key, const std::string& name,
                               int64_t min, int64_t max) {
  const json* v = field(obj, key);
  if (!v) return std::nullopt;
  auto out_of_range = [&](const std::string& got) {
    return bad_request(name + " must be between " + std::to_string(min) + " and " +
                       std::to_string(max) + ", got " + got);
  };
  int64_t n = 0;
  if (v->is_number_integer()) {
    if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      throw out_of_range(std::to_string(v->get<uint64_t>()));
    }
    n = v->get<int64_t>();
  } else if (v->is_number_float() && std::isfinite(v->get<double>()) &&
             v->get<double>() == std::floor(v->get<double>())) {
    // 5.0 is an integer, as in JSON Schema; 1e30 is one too, but out of range rather than
    // cast to int64 (undefined behaviour).
    const double x = v->get<double>();
    if (std::abs(x) >= 0x1p63) throw out_of_range(fmt(x));
    n = static_cast<int64_t>(x);
  } else {
    wrong_type(name, "an integer", *v);
  }
  if (n < min || n > max) throw out_of_range(std::to_string(n));
  return n;
}

std::optional<double> get_number(const json& obj, const char* key, const std::string& name,
                                 double min, double max) {
  const json* v = field(obj, key);
  if (!v) return std::nullopt;
  if (!v->is_number()) wrong_type(name, "a number", *v);
  const double x = v->get<double>();
  if (!std::isfinite(x) || x < min || x > max) {
    throw bad_request(name + " must be between " + fmt(min) + " and " + fmt(max) + ", got " +
                      fmt(x));
  }
  return x;
}

const json* get_object(const json& obj, const char* key, const std::string& name) {
  const json* v = field(obj, key);
  if (v && !v->is_object()) wrong_type(name, "an object", *v);
  return v;
}

const json* get_array(const json& obj, const char* key, const std::string& name) {
  const json* v = field(obj, key);
  if (v && !v->is_array()) wrong_type(name, "an array", *v);
  return v;
}

std::optional<std::vector<std::string>> get_strings(const json& obj, const char* key,
                                                    const std::string& name) {
  const json* v = field(obj, key);
  if (!v) return std::nullopt;
  if (v->is_string()) return std::vector<std::string>{v->get<std::string>()};
  if (!v->is_array()) wrong_type(name, "a string or an array of strings", *v);
  std::vector<std::string> out;
  for (const auto& s : *v) {
    if (!s.is_string()) wrong_type(name, "a string or an array of strings", *v);
    out.push_back(s.get<std::string>());
  }
  return out;
}

}  // namespace heron::http
