#include "heron/store/model_files.h"

#include <fstream>

#include "heron/core/error.h"
#include "heron/store/store.h"

namespace heron::store {

namespace fs = std::filesystem;

const fs::path* ModelFiles::find(const std::string& name) const {
  auto it = files.find(name);
  return it == files.end() ? nullptr : &it->second;
}

ModelFiles files_of_dir(const fs::path& dir) {
  ModelFiles mf{dir.string(), {}, dir, ""};
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file(ec)) mf.files[e.path().filename().string()] = e.path();
  }
  if (ec) throw Error(dir.string() + ": cannot list: " + ec.message());
  return mf;
}

ModelFiles files_of_manifest(const Store& store, const Manifest& m, const std::string& label) {
  ModelFiles mf{label, {}, std::nullopt, ""};
  for (const auto& l : m.files) mf.files[l.name] = store.blob_path(l.digest);
  return mf;
}

bool is_manifest_path(const fs::path& path) {
  std::error_code ec;
  if (fs::symlink_status(path, ec).type() != fs::file_type::regular) return false;
  const fs::path p = fs::absolute(path, ec);
  // manifests/<space>/<name>/<tag>
  return p.parent_path().parent_path().parent_path().filename() == "manifests";
}

ModelFiles files_of_manifest_path(const fs::path& path) {
  const fs::path p = fs::absolute(path);
  const fs::path tag = p.filename(), name = p.parent_path().filename(),
                 space = p.parent_path().parent_path().filename();
  Store store(p.parent_path().parent_path().parent_path().parent_path());
  auto model = ModelName::parse(space.string() + "/" + name.string() + ":" + tag.string());
  auto m = store.read_manifest(model);
  if (!m) throw Error(path.string() + ": no such model manifest");
  return files_of_manifest(store, *m, "model " + model.str());
}

GgufModelJson read_gguf_model_json(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path.string() + ": cannot open");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw Error(path.string() + ": invalid JSON: " + e.what());
  }
  if (!j.is_object() || !j.contains("metadata") || !j["metadata"].is_object() ||
      !j.contains("quantization") || !j["quantization"].is_object()) {
    throw Error(path.string() + ": gguf_model.json needs 'metadata' and 'quantization' objects");
  }
  return {std::move(j["metadata"]), std::move(j["quantization"])};
}

std::optional<ModelFiles> draft_files(const ModelFiles& target) {
  ModelFiles d{target.source + " (draft)", {}, std::nullopt, ""};
  if (const auto* g = target.find("draft.gguf")) {
    d.files["model.gguf"] = *g;
    return d;
  }
  const fs::path* weights = target.find("draft.safetensors");
  if (!weights) return std::nullopt;
  if (const auto* g = target.find("draft.gguf_model.json")) {
    d.files = {{"gguf_model.json", *g}, {"model.safetensors", *weights}};
    d.tensor_prefix = "draft.";
    return d;
  }
  const fs::path* config = target.find("draft.config.json");
  if (!config) throw Error(target.source + ": the draft's weights have no draft.config.json");
  d.files = {{"config.json", *config}, {"model.safetensors", *weights}};
  d.tensor_prefix = "draft.";
  for (const char* name : {"tokenizer.json", "tokenizer_config.json"}) {
    if (const auto* f = target.find(name)) d.files[name] = *f;
  }
  return d;
}

}  // namespace heron::store
