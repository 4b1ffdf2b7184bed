#include "heron/model/loader.h"

#include <fstream>
#include <regex>

#include <mlx/device.h>

#include "heron/core/error.h"
#include "heron/io/fused_experts.h"
#include "heron/io/gguf.h"
#include "heron/io/text_model_names.h"
#include "heron/io/weights.h"
#include "heron/model/registry.h"
#include "heron/model/warmup.h"
#include "heron/store/model_files.h"

namespace heron::model {

namespace fs = std::filesystem;
namespace mx = mlx::core;
using nlohmann::json;

namespace {

bool on_gpu() {
  return mx::default_device() == mx::Device::gpu;
}

// The CPU computes in float32 (its kernels are float32); GPUs in the checkpoint's
// 16-bit type, so bfloat16 models keep their range.
mx::Dtype default_dtype(const json& config) {
  if (!on_gpu()) return mx::float32;
  for (const char* key : {"torch_dtype", "dtype"}) {
    if (config.contains(key) && config[key].is_string()) {
      auto d = dtype_from_name(config[key].get<std::string>());
      if (d && *d != mx::float32) return *d;
    }
  }
  return mx::float16;
}

LoadedModel finish(LoadedModel loaded, const LoadOptions& options) {
  if (options.warm_up && on_gpu()) warm_up(*loaded.model);
  return loaded;
}

LoadedModel load_hf(const store::ModelFiles& files, const LoadOptions& options) {
  const auto* config_path = files.find("config.json");
  if (!config_path) throw Error(files.source + ": no config.json");
  json generation = nullptr;
  if (const auto* g = files.find("generation_config.json")) generation = read_json_file(*g);
  const auto config_json = read_json_file(*config_path);
  auto config = config_from_hf(config_json, generation, config_path->string());
  Weights weights(io::with_unfused_experts(io::with_text_model_names(load_safetensors(files)),
                                           files.source, io::fused_experts_of(config.architecture)),
                  files.source, config.quant_group_size,
                  options.dtype.value_or(default_dtype(config_json)));
  std::map<std::string, QuantScheme> schemes;  // under the names the weights now have
  for (const auto& [module, scheme] : config.quant_layers) {
    schemes.insert_or_assign(io::text_model_name(module), scheme);
  }
  weights.set_quant_schemes(config.quant_mode, std::move(schemes));
  LoadedModel loaded{files.source, build_model(config, weights), nullptr};
  if (options.load_tokenizer) loaded.tokenizer = load_tokenizer(files);
  return loaded;
}

// A model described by GGUF metadata, its tensors already under Hugging Face names:
// a GGUF file, or a float GGUF quantized by create (`quantization` is then its section).
LoadedModel load_gguf_described(const json& metadata, io::WeightMap weights,
                                const json& quantization, const std::string& source,
                                const LoadOptions& options) {
  auto config = config_from_gguf(metadata, source);
  if (!quantization.is_null()) read_quantization(quantization, config, source);
  // GGUF files of tied models simply have no output tensor.
  config.tie_word_embeddings = weights.count("lm_head.weight") == 0;
  Weights w(std::move(weights), source, config.quant_group_size,
            options.dtype.value_or(default_dtype(json::object())));
  w.set_quant_schemes(config.quant_mode, config.quant_layers);
  LoadedModel loaded{source, build_model(config, w), nullptr};
  if (options.load_tokenizer) loaded.tokenizer = tokenizer::Tokenizer::from_gguf_metadata(metadata);
  return loaded;
}

LoadedModel load_gguf(const fs::path& path, const LoadOptions& options) {
  auto header = io::read_gguf_header(path.string());
  const std::string arch = header.metadata.value("general.architecture", "");
  io::WeightMap renamed;
  for (auto& [name, array] : io::load_gguf_tensors(header)) {
    renamed.insert_or_assign(hf_name_from_gguf(name, arch), array);
  }
  // Each block type has its own group size: say so per layer, in mlx-lm's form.
  json quantization = {{"group_size", 32}};
  for (const auto& [prefix, form] : io::gguf_quant_forms(header)) {
    const std::string hf = hf_name_from_gguf(prefix + ".weight", arch);
    quantization[hf.substr(0, hf.size() - 7)] = {{"group_size", form.group_size},
                                                 {"mode", form.mode}};
  }
  return load_gguf_described(header.metadata, std::move(renamed), quantization, path.string(),
                             options);
}

}  // namespace

std::optional<mx::Dtype> dtype_from_name(const std::string& name) {
  if (name == "float32" || name == "fp32") return mx::float32;
  if (name == "float16" || name == "fp16") return mx::float16;
  if (name == "bfloat16" || name == "bf16") return mx::bfloat16;
  return std::nullopt;
}

std::string hf_name_from_gguf(const std::string& name, const std::string& architecture) {
  static const std::vector<std::pair<std::string, std::string>> layer_parts = {
      {"attn_norm", "input_layernorm"},
      {"ffn_norm", "post_attention_layernorm"},
      {"attn_q_norm", "self_attn.q_norm"},
      {"attn_k_norm", "self_attn.k_norm"},
      {"attn_q", "self_attn.q_proj"},
      {"attn_k", "self_attn.k_proj"},
      {"attn_v", "self_attn.v_proj"},
      {"attn_output", "self_attn.o_proj"},
      {"ffn_gate", "mlp.gate_proj"},
      {"ffn_up", "mlp.up_proj"},
      {"ffn_down", "mlp.down_proj"},
      // Mixtures of experts: the router, and each projection of all experts stacked.
      {"ffn_gate_inp", "mlp.gate"},
      {"ffn_gate_exps", "mlp.switch_mlp.gate_proj"},
      {"ffn_up_exps", "mlp.switch_mlp.up_proj"},
      {"ffn_down_exps", "mlp.switch_mlp.down_proj"},
  };
  // deepseek2 (GLM-4.7-Flash): latent attention's projections, its per-head halves of
  // kv_b (attn_k_b already transposed as mlx-lm's embed_q), shared experts.
  static const std::vector<std::pair<std::string, std::string>> deepseek2_parts = {
      {"attn_q_a", "self_attn.q_a_proj"},
      {"attn_q_a_norm", "self_attn.q_a_layernorm"},
      {"attn_q_b", "self_attn.q_b_proj"},
      {"attn_kv_a_mqa", "self_attn.kv_a_proj_with_mqa"},
      {"attn_kv_a_norm", "self_attn.kv_a_layernorm"},
      {"attn_kv_b", "self_attn.kv_b_proj"},
      {"attn_k_b", "self_attn.embed_q"},
      {"attn_v_b", "self_attn.unembed_out"},
      {"ffn_gate_shexp", "mlp.shared_experts.gate_proj"},
      {"ffn_up_shexp", "mlp.shared_experts.up_proj"},
      {"ffn_down_shexp", "mlp.shared_experts.down_proj"},
  };
  // Gemma 3 norms the residual branches on both sides: its ffn_norm is the norm before
  // the MLP, and two more follow attention and the MLP.
  static const std::vector<std::pair<std::string, std::string>> gemma3_parts = {
      {"post_attention_norm", "post_attention_layernorm"},
      {"ffn_norm", "pre_feedforward_layernorm"},
      {"post_ffw_norm", "post_feedforward_layernorm"},
  };
  static const std::regex layer(R"(blk\.(\d+)\.([a-z_]+)\.(\w+))");
  std::smatch m;
  if (std::regex_match(name, m, layer)) {
    if (architecture == "gpt-oss") {
      // gpt-oss norms before attention and before the experts; its sinks are one vector.
      if (m[2] == "post_attention_norm") {
        return "model.layers." + m[1].str() + ".post_attention_layernorm." + m[3].str();
      }
      if (m[2] == "attn_sinks") return "model.layers." + m[1].str() + ".self_attn.sinks";
    }
    if (architecture == "deepseek2") {
      if (m[2] == "exp_probs_b") {
        return "model.layers." + m[1].str() + ".mlp.gate.e_score_correction_bias";
      }
      for (const auto& [gguf, hf] : deepseek2_parts) {
        if (m[2] == gguf) return "model.layers." + m[1].str() + "." + hf + "." + m[3].str();
      }
    }
    if (architecture == "gemma3") {
      for (const auto& [gguf, hf] : gemma3_parts) {
        if (m[2] == gguf) return "model.layers." + m[1].str() + "." + hf + "." + m[3].str();
      }
    }
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

io::WeightMap load_safetensors(const store::ModelFiles& files) {
  if (files.dir) return io::load_safetensors_dir(*files.dir);
  const auto* file = files.find("model.safetensors");
  if (!file) throw Error(files.source + ": no model.safetensors");
  auto all = io::load_safetensors_file(*file);
  if (files.tensor_prefix.empty()) {
    if (const auto* head = files.find(store::kPredictionHeadFile)) {
      all.merge(io::load_safetensors_file(*head));
    }
    return all;
  }
  io::WeightMap mine;
  for (auto& [name, array] : all) {
    if (name.rfind(files.tensor_prefix, 0) == 0) {
      mine.insert_or_assign(name.substr(files.tensor_prefix.size()), array);
    }
  }
  return mine;
}

nlohmann::json read_json_file(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw Error(path.string() + ": cannot open");
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw Error(path.string() + ": invalid JSON: " + e.what());
  }
}

std::unique_ptr<tokenizer::Tokenizer> load_tokenizer(const store::ModelFiles& files) {
  if (files.dir) {
    if (!files.find("tokenizer.json")) return nullptr;
    return tokenizer::Tokenizer::from_hf_dir(*files.dir);
  }
  const auto* tj = files.find("tokenizer.json");
  if (!tj) return nullptr;
  std::optional<fs::path> tc;
  if (const auto* f = files.find("tokenizer_config.json")) tc = *f;
  return tokenizer::Tokenizer::from_json_files(*tj, tc);
}

std::optional<store::ModelFiles> files_at(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return store::files_of_dir(path);
  if (store::is_manifest_path(path)) return store::files_of_manifest_path(path);
  return std::nullopt;
}

LoadedModel load_files(const store::ModelFiles& files, const LoadOptions& options) {
  if (const auto* gguf = files.find("model.gguf")) {
    auto loaded = load_gguf(*gguf, options);
    loaded.source = files.source;
    return loaded;
  }
  if (const auto* described = files.find("gguf_model.json")) {
    auto g = store::read_gguf_model_json(*described);
    return load_gguf_described(g.metadata, load_safetensors(files), g.quantization, files.source,
                               options);
  }
  return load_hf(files, options);
}

LoadedModel load_model(const fs::path& path, const LoadOptions& options) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    return finish(load_files(store::files_of_dir(path), options), options);
  if (store::is_manifest_path(path)) {
    auto files = store::files_of_manifest_path(path);
    if (!options.draft) return finish(load_files(files, options), options);
    auto draft = store::draft_files(files);
    if (!draft) throw Error(files.source + " has no draft model");
    return finish(load_files(*draft, options), options);
  }
  if (!fs::exists(path, ec)) throw Error(path.string() + ": no such file or directory");
  if (path.extension() == ".gguf") return finish(load_gguf(path, options), options);
  // Sniff the magic for GGUF files without the usual extension.
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  if (in && std::string(magic, 4) == "GGUF") return finish(load_gguf(path, options), options);
  throw Error(path.string() +
              ": not a model (expected a GGUF file or a directory with config.json)");
}

}  // namespace heron::model
