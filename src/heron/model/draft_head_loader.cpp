#include "heron/model/draft_head_loader.h"

#include <string>

#include "heron/core/error.h"
#include "heron/model/layers/draft_head.h"
#include "heron/model/layers/linear.h"

namespace heron::model {

using nlohmann::json;

namespace {

int positive(const json& config, const char* key, const std::string& source) {
  if (!config.contains(key) || !config[key].is_number_integer() || config[key].get<int64_t>() < 1 ||
      config[key].get<int64_t>() > (int64_t{1} << 24)) {
    throw Error(source + ": '" + key + "' must be a positive integer");
  }
  return config[key].get<int>();
}

// The head's llama block, as tools/draft_head/head.py trains it: half-split RoPE of its
// own base, no scaling.
ModelConfig head_config(const json& j, const ModelConfig& target, const std::string& source) {
  ModelConfig c;
  c.architecture = kDraftHeadArchitecture;
  c.num_layers = 1;
  c.max_position_embeddings = target.max_position_embeddings;
  c.hidden_size = positive(j, "hidden_size", source);
  c.intermediate_size = positive(j, "intermediate_size", source);
  c.num_heads = positive(j, "num_attention_heads", source);
  c.num_kv_heads = positive(j, "num_key_value_heads", source);
  c.head_dim = positive(j, "head_dim", source);
  c.vocab_size = positive(j, "vocab_size", source);
  if (c.num_heads % c.num_kv_heads != 0) {
    throw Error(source + ": num_attention_heads must be a multiple of num_key_value_heads");
  }
  if (j.contains("rms_norm_eps")) {
    if (!j["rms_norm_eps"].is_number() || !(j["rms_norm_eps"].get<double>() > 0)) {
      throw Error(source + ": 'rms_norm_eps' must be a positive number");
    }
    c.rms_norm_eps = j["rms_norm_eps"].get<float>();
  }
  if (!j.contains("rope_theta") || !j["rope_theta"].is_number() ||
      !(j["rope_theta"].get<double>() > 0)) {
    throw Error(source + ": 'rope_theta' must be a positive number");
  }
  c.rope_theta = j["rope_theta"].get<float>();
  if (j.contains("quantization")) read_quantization(j["quantization"], c, source);
  return c;
}

}  // namespace

bool is_draft_head_config(const json& config) {
  if (!config.is_object() || !config.contains("architectures")) return false;
  const auto& a = config["architectures"];
  return a.is_array() && a.size() == 1 && a[0] == kDraftHeadArchitecture;
}

bool is_draft_head(const store::ModelFiles& files) {
  const auto* config = files.find("config.json");
  return config && is_draft_head_config(read_json_file(*config));
}

std::unique_ptr<PredictionHead> load_draft_head(const store::ModelFiles& files, const Model& target,
                                                const LoadOptions& options) {
  const auto* config_path = files.find("config.json");
  if (!config_path) throw Error(files.source + ": no config.json");
  const auto j = read_json_file(*config_path);
  const auto config = head_config(j, target.config(), files.source);
  // The head computes in its model's type (DraftHead::load refuses a model without
  // shared layers).
  const auto shared = target.shared_layers();
  Weights weights(load_safetensors(files), files.source, config.quant_group_size,
                  options.dtype.value_or(shared ? shared->embed.dtype() : mlx::core::float32));
  weights.set_quant_schemes(config.quant_mode, config.quant_layers);
  return DraftHead::load(weights, config, target);
}

}  // namespace heron::model
