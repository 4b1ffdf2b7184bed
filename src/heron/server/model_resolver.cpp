#include "heron/server/model_resolver.h"

#include "heron/core/default_model.h"
#include "heron/http/http_error.h"
#include "heron/server/model_footprint.h"
#include "heron/store/create.h"
#include "heron/store/store.h"

namespace heron::server {

namespace {

bool is_builtin_name(const std::string& name) {
  for (const char* base : {"default", "smollm2", "gemma3"}) {
    if (name == base || name == std::string(base) + ":latest") return true;
  }
  return false;
}

}  // namespace

ResolvedModel PathResolver::resolve(const std::string& name) const {
  if (name.empty()) throw http::bad_request("model is required");
  if (is_builtin_name(name)) {
    try {
      const auto path = *builtin_model_path(name);
      return {name.find(':') == std::string::npos ? name + ":latest" : name, path,
              estimate_model_bytes(path)};
    } catch (const Error& e) {
      throw http::ModelNotFound("model '" + name + "' not found: " + e.what());
    }
  }
  std::error_code ec;
  std::filesystem::path path(name);
  if (!path.is_absolute() || !std::filesystem::exists(path, ec)) {
    throw http::ModelNotFound("model '" + name +
                              "' not found; give 'default', 'gemma3' or the absolute path of a "
                              "GGUF file or Hugging Face model directory");
  }
  return {name, path, estimate_model_bytes(path)};
}

std::vector<ResolvedModel> PathResolver::list() const {
  std::vector<ResolvedModel> models;
  for (const char* name : {"smollm2:latest", "gemma3:latest"}) {
    try {
      models.push_back({name, *builtin_model_path(name)});
    } catch (const Error&) {
      // not installed
    }
  }
  return models;
}

ResolvedModel StoreResolver::resolve(const std::string& name) const {
  if (name.empty()) throw http::bad_request("model is required");
  if (std::filesystem::path(name).is_absolute()) return paths_.resolve(name);
  store::ModelName parsed;
  try {
    parsed = store::ModelName::parse(name);
  } catch (const Error& e) {
    throw http::bad_request(e.what());
  }
  std::optional<store::Manifest> manifest;
  nlohmann::json settings;
  try {
    manifest = store_.read_manifest(parsed);
    if (manifest) settings = store::read_settings(store_, *manifest);
  } catch (const Error& e) {
    throw http::HttpError(500, "model '" + name + "' is damaged: " + e.what());
  }
  if (!manifest) {
    if (is_builtin_name(name)) return paths_.resolve(name);
    throw http::ModelNotFound("model '" + parsed.str() + "' not found");
  }
  ResolvedModel m{parsed.str(), store_.manifest_file(parsed)};
  for (const auto& f : manifest->files) {
    if (f.name.ends_with(".safetensors") || f.name.ends_with(".gguf")) m.weight_bytes += f.size;
  }
  const auto s = store::ModelSettings::from_json(settings.value("settings", nlohmann::json()));
  m.options = s.parameters;
  m.chat_template = s.chat_template;
  m.system = s.system;
  for (const auto& msg : s.messages) {
    m.messages.push_back({{"role", msg.role}, {"content", msg.content}});
  }
  return m;
}

std::vector<ResolvedModel> StoreResolver::list() const {
  std::vector<ResolvedModel> out;
  for (const auto& e : store_.list()) out.push_back({e.name.str(), store_.manifest_file(e.name)});
  for (auto& m : paths_.list()) {
    bool shadowed = false;
    for (const auto& o : out) shadowed = shadowed || o.name == m.name;
    if (!shadowed) out.push_back(std::move(m));
  }
  return out;
}

}  // namespace heron::server
