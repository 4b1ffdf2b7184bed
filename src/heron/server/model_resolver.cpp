#include "heron/server/model_resolver.h"

#include "heron/core/default_model.h"
#include "heron/http/http_error.h"

namespace heron::server {

namespace {

bool is_default_name(const std::string& name) {
  return name == "default" || name == "default:latest" || name == "smollm2" ||
         name == "smollm2:latest";
}

}  // namespace

ResolvedModel PathResolver::resolve(const std::string& name) const {
  if (name.empty()) throw http::bad_request("model is required");
  if (is_default_name(name)) {
    try {
      return {name.find(':') == std::string::npos ? name + ":latest" : name, default_model_path()};
    } catch (const Error& e) {
      throw http::HttpError(404, "model '" + name + "' not found: " + e.what());
    }
  }
  std::error_code ec;
  std::filesystem::path path(name);
  if (!path.is_absolute() || !std::filesystem::exists(path, ec)) {
    throw http::HttpError(404, "model '" + name +
                                   "' not found; give 'default' or the absolute path of a GGUF "
                                   "file or Hugging Face model directory");
  }
  return {name, path};
}

std::vector<ResolvedModel> PathResolver::list() const {
  try {
    return {{"smollm2:latest", default_model_path()}};
  } catch (const Error&) {
    return {};
  }
}

}  // namespace heron::server
