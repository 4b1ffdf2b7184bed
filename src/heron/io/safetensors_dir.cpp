#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <mlx/io.h>

#include "heron/io/file_errors.h"
#include "heron/io/safetensors.h"
#include "heron/io/weights.h"

// load_safetensors_dir: Hugging Face safetensors directories, single or sharded.
namespace heron::io {
namespace fs = std::filesystem;
namespace mx = mlx::core;

namespace {

WeightMap load_safetensors_file(const SafetensorsHeader& h) {
  for (const auto& t : h.tensors) {
    // Valid safetensors, but MLX's reader has no F64 mapping.
    if (t.dtype == "F64") {
      fail_file(h.path, "tensor " + in_quotes(t.name) + ": dtype F64 is not supported");
    }
    for (int64_t d : t.shape) check_mlx_dim(h.path, t.name, static_cast<uint64_t>(d));
  }
  mx::SafetensorsLoad loaded;
  try {
    loaded = mx::load_safetensors(h.path);
  } catch (const std::exception& e) {
    fail_file(h.path, std::string("MLX could not load the file: ") + e.what());
  }
  if (loaded.first.size() != h.tensors.size()) {
    fail_file(h.path, "MLX returned " + std::to_string(loaded.first.size()) +
                          " tensors, header has " + std::to_string(h.tensors.size()));
  }
  return std::move(loaded.first);
}

// A shard name from the index must be a plain file name inside the model directory.
void check_shard_name(const fs::path& index, const std::string& shard) {
  if (shard.empty() || shard.find('/') != std::string::npos ||
      shard.find('\\') != std::string::npos || shard.find("..") != std::string::npos ||
      shard.find('\0') != std::string::npos) {
    fail_file(index.string(), "shard name " + in_quotes(shard) + " is not a plain file name");
  }
}

std::map<std::string, std::string> read_weight_map(const fs::path& index) {
  std::ifstream in(index, std::ios::binary);
  if (!in) fail_file(index.string(), "cannot open");
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    fail_file(index.string(), std::string("not valid JSON: ") + e.what());
  }
  if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object()) {
    fail_file(index.string(), "has no weight_map object");
  }
  std::map<std::string, std::string> map;
  for (const auto& [name, shard] : j["weight_map"].items()) {
    if (!shard.is_string()) {
      fail_file(index.string(), "weight_map entry " + in_quotes(name) + " is not a string");
    }
    check_shard_name(index, shard.get<std::string>());
    map[name] = shard.get<std::string>();
  }
  if (map.empty()) fail_file(index.string(), "weight_map is empty");
  return map;
}

WeightMap load_sharded(const fs::path& dir, const fs::path& index) {
  auto weight_map = read_weight_map(index);
  std::map<std::string, std::set<std::string>> names_by_shard;
  for (const auto& [name, shard] : weight_map) names_by_shard[shard].insert(name);

  // Validate every shard before loading any.
  std::vector<std::pair<std::string, SafetensorsHeader>> headers;
  for (const auto& [shard, names] : names_by_shard) {
    fs::path file = dir / shard;
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) {
      fail_file(index.string(),
                "names shard " + in_quotes(shard) + " which is not a file in " + dir.string());
    }
    headers.emplace_back(shard, read_safetensors_header(file.string()));
    std::set<std::string> present;
    for (const auto& t : headers.back().second.tensors) present.insert(t.name);
    for (const auto& name : names) {
      if (!present.count(name)) {
        fail_file(index.string(), "tensor " + in_quotes(name) + " is indexed in " +
                                      in_quotes(shard) + " but that shard does not contain it");
      }
    }
  }
  WeightMap all;
  for (const auto& [shard, h] : headers) {
    for (auto& [name, arr] : load_safetensors_file(h)) {
      // A tensor the index does not list is kept; one it places elsewhere is a conflict.
      auto it = weight_map.find(name);
      if (it != weight_map.end() && it->second != shard) {
        fail_file(h.path, "tensor " + in_quotes(name) + " is indexed in another shard " +
                              in_quotes(it->second));
      }
      if (!all.emplace(name, arr).second) {
        fail_file(h.path, "tensor " + in_quotes(name) + " appears in two shards");
      }
    }
  }
  return all;
}

}  // namespace

WeightMap load_safetensors_file(const fs::path& path) {
  return load_safetensors_file(read_safetensors_header(path.string()));
}

WeightMap load_safetensors_dir(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) fail_file(dir.string(), "is not a directory");
  fs::path index = dir / "model.safetensors.index.json";
  if (fs::exists(index, ec)) return load_sharded(dir, index);
  fs::path single = dir / "model.safetensors";
  if (fs::exists(single, ec)) {
    return load_safetensors_file(read_safetensors_header(single.string()));
  }
  throw Error("no model.safetensors or model.safetensors.index.json in " + dir.string());
}

}  // namespace heron::io
