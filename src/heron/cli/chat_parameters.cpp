#include "heron/cli/chat_parameters.h"

#include <charconv>
#include <cmath>

#include "heron/api/generation_params.h"
#include "heron/core/error.h"
#include "heron/http/http_error.h"

namespace heron::cli {

namespace {

const char* const kIntegers[] = {"num_ctx", "num_predict", "seed", "top_k", "repeat_last_n"};
const char* const kNumbers[] = {
    "temperature", "top_p", "min_p", "repeat_penalty", "presence_penalty", "frequency_penalty"};

bool one_of(const std::string& name, const auto& names) {
  for (const char* n : names) {
    if (name == n) return true;
  }
  return false;
}

}  // namespace

void check_options(const nlohmann::json& options) {
  if (!options.is_object()) throw Error("options must be a JSON object");
  api::GenerationParams ignored;
  try {
    api::read_ollama_options(options, "", ignored);
  } catch (const http::HttpError& e) {
    throw Error(std::string("bad parameter: ") + e.what());
  }
}

nlohmann::json parameter_value(const std::string& name, const std::vector<std::string>& words) {
  if (words.empty()) throw Error("give a value for parameter '" + name + "'");
  nlohmann::json value;
  if (name == "stop") {
    value = words;
  } else if (words.size() != 1) {
    throw Error("parameter '" + name + "' takes one value");
  } else if (one_of(name, kIntegers)) {
    const std::string& w = words[0];
    int64_t n = 0;
    auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), n);
    if (ec != std::errc() || end != w.data() + w.size()) {
      throw Error("parameter '" + name + "' must be an integer, got '" + w + "'");
    }
    value = n;
  } else if (one_of(name, kNumbers)) {
    const std::string& w = words[0];
    double x = 0;
    auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), x);
    if (ec != std::errc() || end != w.data() + w.size() || !std::isfinite(x)) {
      throw Error("parameter '" + name + "' must be a number, got '" + w + "'");
    }
    value = x;
  } else {
    throw Error("unknown parameter '" + name + "'");
  }
  check_options({{name, value}});
  return value;
}

}  // namespace heron::cli
