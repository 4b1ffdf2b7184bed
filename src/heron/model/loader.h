#pragma once
// Opens a model from disk: a Hugging Face safetensors directory, a GGUF file, or a
// model store manifest (manifests/<space>/<name>/<tag>; its blobs are read in place).
// Headers are validated first; weights are renamed to Hugging Face names so the
// architecture files see one naming scheme.
#include <filesystem>
#include <memory>
#include <optional>

#include <mlx/dtype.h>

#include "heron/io/weights.h"
#include "heron/model/model.h"
#include "heron/store/model_files.h"
#include "heron/tokenizer/tokenizer.h"

namespace heron::model {

struct LoadOptions {
  // Compute type for activations and float weights; default: float32 on the CPU; on
  // GPUs the checkpoint's own 16-bit type (config.json "torch_dtype"), else float16.
  std::optional<mlx::core::Dtype> dtype;
  bool load_tokenizer = true;
  // For a store manifest: load the model's stored draft instead of the model.
  bool draft = false;
  // Run one prefill and one decode step at load time on GPUs (see warmup.h).
  bool warm_up = true;
};

// "float32", "float16" or "bfloat16" (also "fp32", "fp16", "bf16"); nullopt otherwise.
std::optional<mlx::core::Dtype> dtype_from_name(const std::string& name);

struct LoadedModel {
  std::string source;
  std::unique_ptr<Model> model;
  std::unique_ptr<tokenizer::Tokenizer> tokenizer;  // null when the source has none
};

LoadedModel load_model(const std::filesystem::path& path, const LoadOptions& options = {});
// The same from a model's files, wherever they live.
LoadedModel load_files(const store::ModelFiles& files, const LoadOptions& options = {});

// A JSON file's contents; a missing or malformed file is a heron::Error naming it.
nlohmann::json read_json_file(const std::filesystem::path& path);
// A model's safetensors weights (Hugging Face names) and its tokenizer (null when it has
// none), wherever its files live; for loaders of other kinds of models (encoders).
io::WeightMap load_safetensors(const store::ModelFiles& files);
std::unique_ptr<tokenizer::Tokenizer> load_tokenizer(const store::ModelFiles& files);
// The files of the model at `path` when it is a directory or a store manifest.
std::optional<store::ModelFiles> files_at(const std::filesystem::path& path);

// GGUF tensor name -> Hugging Face name ("blk.3.attn_q.weight" ->
// "model.layers.3.self_attn.q_proj.weight") in a model of that GGUF architecture;
// unknown names pass through.
std::string hf_name_from_gguf(const std::string& name, const std::string& architecture);

}  // namespace heron::model
