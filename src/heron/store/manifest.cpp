#include "heron/store/manifest.h"

#include "heron/core/error.h"
#include "heron/store/name.h"

namespace heron::store {

namespace {

using nlohmann::json;

constexpr const char* kManifestType = "application/vnd.heron.manifest.v1+json";
constexpr const char* kSettingsType = "application/vnd.heron.settings.v1+json";
constexpr const char* kFileType = "application/vnd.heron.file";

json layer_json(const Layer& l, const char* type) {
  json j = {{"mediaType", type}, {"digest", l.digest}, {"size", l.size}};
  if (!l.name.empty()) j["name"] = l.name;
  return j;
}

Layer layer_from(const json& j, bool named, const std::string& source, const std::string& at) {
  auto fail = [&](const std::string& why) { throw Error(source + ": " + at + " " + why); };
  if (!j.is_object()) fail("must be an object");
  Layer l;
  if (!j.contains("digest") || !j["digest"].is_string()) fail("has no digest");
  l.digest = j["digest"].get<std::string>();
  try {
    digest_hex(l.digest);
  } catch (const Error& e) {
    fail(e.what());
  }
  if (!j.contains("size") || !j["size"].is_number_unsigned()) fail("has no size");
  l.size = j["size"].get<uint64_t>();
  if (named) {
    if (!j.contains("name") || !j["name"].is_string()) fail("has no name");
    l.name = j["name"].get<std::string>();
    if (!is_safe_file_name(l.name)) fail("has an unsafe file name");
  }
  return l;
}

}  // namespace

bool is_safe_file_name(const std::string& name) {
  if (name.empty() || name.size() > 100 || name[0] == '.') return false;
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (!(std::isalnum(u) || c == '.' || c == '_' || c == '-')) return false;
  }
  return true;
}

json Manifest::to_json() const {
  json layers = json::array();
  for (const auto& f : files) layers.push_back(layer_json(f, kFileType));
  return {{"schemaVersion", 2},
          {"mediaType", kManifestType},
          {"config", layer_json(settings, kSettingsType)},
          {"layers", layers}};
}

Manifest Manifest::from_json(const json& j, const std::string& source) {
  if (!j.is_object() || j.value("mediaType", "") != kManifestType) {
    throw Error(source + ": not a heron manifest");
  }
  if (!j.contains("config") || !j.contains("layers") || !j["layers"].is_array()) {
    throw Error(source + ": manifest needs config and layers");
  }
  Manifest m;
  m.settings = layer_from(j["config"], false, source, "config");
  for (size_t i = 0; i < j["layers"].size(); ++i) {
    m.files.push_back(
        layer_from(j["layers"][i], true, source, "layers[" + std::to_string(i) + "]"));
    for (size_t k = 0; k < i; ++k) {
      if (m.files[k].name == m.files[i].name) {
        throw Error(source + ": file '" + m.files[i].name + "' is listed twice");
      }
    }
  }
  return m;
}

const Layer* Manifest::find(const std::string& name) const {
  for (const auto& f : files) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

}  // namespace heron::store
