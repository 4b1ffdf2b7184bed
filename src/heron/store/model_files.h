#pragma once
// A model's files by logical name ("config.json", "model.safetensors", "model.gguf",
// "tokenizer.json", ...), wherever they live: a Hugging Face directory, or the blobs a
// store manifest names (read in place, never copied). The loader and `create` both
// read models through this view.
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "heron/store/manifest.h"

namespace heron::store {

class Store;

// A stored model's multi-token-prediction head (mtp.*), beside model.safetensors.
inline constexpr const char* kPredictionHeadFile = "mtp.safetensors";

struct ModelFiles {
  std::string source;  // for messages: a directory or "model NAME"
  std::map<std::string, std::filesystem::path> files;
  // Set for a Hugging Face directory (which may hold shards and an index).
  std::optional<std::filesystem::path> dir;
  // Weight names carry this prefix in the file ("draft." for a stored draft).
  std::string tensor_prefix;

  const std::filesystem::path* find(const std::string& name) const;
};

// Every regular file directly inside `dir` (symlinks to files included: the user chose them).
ModelFiles files_of_dir(const std::filesystem::path& dir);
// The files of a manifest, resolved to blob paths (each checked to exist).
ModelFiles files_of_manifest(const Store& store, const Manifest& m, const std::string& label);
// True when `path` is a regular file inside a store's manifests/ tree.
bool is_manifest_path(const std::filesystem::path& path);
// Opens the store around a manifest path and reads it.
ModelFiles files_of_manifest_path(const std::filesystem::path& path);
// gguf_model.json, written when create quantizes a float GGUF: the GGUF's metadata
// (architecture, tokenizer, chat template) and mlx-lm's "quantization" section for the
// Hugging Face-named tensors in model.safetensors beside it.
struct GgufModelJson {
  nlohmann::json metadata;      // an object, as io::read_gguf_header gives it
  nlohmann::json quantization;  // an object
};
GgufModelJson read_gguf_model_json(const std::filesystem::path& path);

// The stored draft model's files ("draft.config.json", "draft.safetensors" or
// "draft.gguf", or "draft.safetensors" + "draft.gguf_model.json", with the target's
// tokenizer files), or nullopt when there is none.
std::optional<ModelFiles> draft_files(const ModelFiles& target);

}  // namespace heron::store
