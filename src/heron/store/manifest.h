#pragma once
// A model's manifest (manifests/<space>/<name>/<tag>): the model's settings blob plus
// the files it is made of, each a blob named by digest. Parsing validates every digest
// and file name, so nothing read from a manifest can point outside the store.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace heron::store {

struct Layer {
  std::string name;    // logical file name: "config.json", "model.safetensors", ...
  std::string digest;  // "sha256:<hex>"
  uint64_t size = 0;
};

struct Manifest {
  Layer settings;  // JSON: format, details, PARAMETER/TEMPLATE/SYSTEM/MESSAGE/LICENSE
  std::vector<Layer> files;

  nlohmann::json to_json() const;
  // Throws heron::Error naming `source` for anything malformed.
  static Manifest from_json(const nlohmann::json& j, const std::string& source);
  const Layer* find(const std::string& name) const;
};

// Layer file names: 1..100 characters of [A-Za-z0-9._-], not starting with '.'.
bool is_safe_file_name(const std::string& name);

}  // namespace heron::store
