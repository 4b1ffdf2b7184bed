#pragma once
// Typed, range-checked reads of JSON request fields. A missing field yields nullopt;
// a present field of the wrong type or range is a 400 naming the field (`name` is the
// path shown to the user, e.g. "options.top_k").
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace heron::http {

using json = nlohmann::json;

// Parses a request body; malformed JSON or a non-object is a 400.
json parse_body(const std::string& body);
// The same, keeping object keys in the client's order (tools reach a template's tojson
// as they were sent).
nlohmann::ordered_json parse_ordered_body(const std::string& body);
// Dumps JSON; invalid UTF-8 in strings (partial tokens) becomes U+FFFD instead of throwing.
std::string dump(const json& j);

// Field lookup that treats JSON null as absent.
const json* field(const json& obj, const char* key);

std::optional<bool> get_bool(const json& obj, const char* key, const std::string& name);
std::optional<std::string> get_string(const json& obj, const char* key, const std::string& name);
std::optional<int64_t> get_int(const json& obj, const char* key, const std::string& name,
                               int64_t min, int64_t max);
std::optional<double> get_number(const json& obj, const char* key, const std::string& name,
                                 double min, double max);
const json* get_object(const json& obj, const char* key, const std::string& name);
const json* get_array(const json& obj, const char* key, const std::string& name);
// A string or an array of strings.
std::optional<std::vector<std::string>> get_strings(const json& obj, const char* key,
                                                    const std::string& name);

}  // namespace heron::http
