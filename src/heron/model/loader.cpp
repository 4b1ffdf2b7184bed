#include "heron/model/loader.h"

#include <fstream>
#include <regex>

#include <mlx/device.h>

#include "heron/core/error.h"
#include "heron/io/gguf.h"
#include "heron/io/weights.h"
#include "heron/model/registry.h"
#include "heron/store/model_files.h"

namespace heron::model {

namespace fs = std::filesystem;
namespace mx = mlx::core;
using nlohmann::json;

namespace {

json read_json_file(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw Error(path.string() + ": cannot open");
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw Error(path.string() + ": invalid JSON: " + e.what());
  }
}

mx::Dtype default_dtype() {
  return mx::default_device() == mx::Device::cpu ? mx::float32 : mx::float16;
}

io::WeightMap load_safetensors(const store::ModelFiles& files) {
  if (files.dir) return io::load_safetensors_dir(*files.dir);
  const auto* file = files.find("model.safetensors");
  if (!file) throw Error(files.source + ": no model.safetensors");
  auto all = io::load_safetensors_file(*file);
  if (files.tensor_prefix.empty()) return all;
  io::WeightMap mine;
  for (auto& [name, array] : all) {
    if (name.rfind(files.tensor_prefix, 0) == 0) {
      mine.insert_or_assign(name.substr(files.tensor_prefix.size()), array);
    }
  }
  return mine;
}

LoadedModel load_hf(const store::ModelFiles& files, const LoadOptions& options) {
  const auto* config_path = files.find("config.json");
  if (!config_path) throw Error(files.source + ": no config.json");
  json generation = nullptr;
  if (const auto* g = files.find("generation_config.json")) generation = read_json_file(*g);
  auto config = config_from_hf(read_json_file(*config_path), generation, config_path->string());
  Weights weights(load_safetensors(files), files.source, config.quant_group_size,
                  options.dtype.value_or(default_dtype()));
  weights.set_quant_schemes(config.quant_mode, config.quant_layers);
  LoadedModel loaded{files.source, build_model(config, weights), nullptr};
  if (!options.load_tokenizer) return loaded;
  if (files.dir) {
    if (files.find("tokenizer.json"))
      loaded.tokenizer = tokenizer::Tokenizer::from_hf_dir(*files.dir);
  } else if (const auto* tj = files.find("tokenizer.json")) {
    std::optional<fs::path> tc;
    if (const auto* f = files.find("tokenizer_config.json")) tc = *f;
    loaded.tokenizer = tokenizer::Tokenizer::from_json_files(*tj, tc);
  }
  return loaded;
}

LoadedModel load_gguf(const fs::path& path, const LoadOptions& options) {
  auto header = io::read_gguf_header(path.string());
  auto config = config_from_gguf(header.metadata, path.string());
  io::WeightMap renamed;
  for (auto& [name, array] : io::load_gguf_tensors(header)) {
    renamed.insert_or_assign(hf_name_from_gguf(name), array);
  }
  // GGUF files of tied models simply have no output tensor.
  config.tie_word_embeddings = renamed.count("lm_head.weight") == 0;
  Weights weights(std::move(renamed), path.string(), 32, options.dtype.value_or(default_dtype()));
  LoadedModel loaded{path.string(), build_model(config, weights), nullptr};
  if (options.load_tokenizer) {
    loaded.tokenizer = tokenizer::Tokenizer::from_gguf_metadata(header.metadata);
  }
  return loaded;
}

}  // namespace

std::string hf_name_from_gguf(const std::string& name) {
  static const std::vector<std::pair<std::string, std::string>> layer_parts = {
      {"attn_norm", "input_layernorm"},        {"ffn_norm", "post_attention_layernorm"},
      {"attn_q_norm", "self_attn.q_norm"},     {"attn_k_norm", "self_attn.k_norm"},
      {"attn_q", "self_attn.q_proj"},          {"attn_k", "self_attn.k_proj"},
      {"attn_v", "self_attn.v_proj"},          {"attn_output", "self_attn.o_proj"},
      {"ffn_gate", "mlp.gate_proj"},           {"ffn_up", "mlp.up_proj"},
      {"ffn_down", "mlp.down_proj"},
  };
  static const std::regex layer(R"(blk\.(\d+)\.([a-z_]+)\.(\w+))");
  std::smatch m;
  if (std::regex_match(name, m, layer)) {
    for (const auto& [gguf, hf] : layer_parts) {
      if (m[2] == gguf) return "model.layers." + m[1].str() + "." + hf + "." + m[3].str();
    }
    return name;
  }
  auto dot = name.find('.');
  const std::string base = name.substr(0, dot);
  const std::string rest = dot == std::string::npos ? "" : name.substr(dot);
  if (base == "token_embd") return "model.embed_tokens" + rest;
  if (base == "output_norm") return "model.norm" + rest;
  if (base == "output") return "lm_head" + rest;
  return name;
}

LoadedModel load_files(const store::ModelFiles& files, const LoadOptions& options) {
  if (const auto* gguf = files.find("model.gguf")) {
    auto loaded = load_gguf(*gguf, options);
    loaded.source = files.source;
    return loaded;
  }
  return load_hf(files, options);
}

LoadedModel load_model(const fs::path& path, const LoadOptions& options) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return load_files(store::files_of_dir(path), options);
  if (store::is_manifest_path(path)) {
    auto files = store::files_of_manifest_path(path);
    if (!options.draft) return load_files(files, options);
    auto draft = store::draft_files(files);
    if (!draft) throw Error(files.source + " has no draft model");
    return load_files(*draft, options);
  }
  if (!fs::exists(path, ec)) throw Error(path.string() + ": no such file or directory");
  if (path.extension() == ".gguf") return load_gguf(path, options);
  // Sniff the magic for GGUF files without the usual extension.
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  if (in && std::string(magic, 4) == "GGUF") return load_gguf(path, options);
  throw Error(path.string() +
              ": not a model (expected a GGUF file or a directory with config.json)");
}

}  // namespace heron::model
