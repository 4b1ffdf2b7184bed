#include "heron/model/config.h"

#include <bit>
#include <cmath>
#include <cstdint>

#include "heron/core/error.h"

namespace heron::model {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw Error(source + ": " + what);
}

int positive_int(const json& j, const std::string& key, const std::string& source,
                 int limit = 1 << 24) {
  if (!j.contains(key)) fail(source, "missing '" + key + "'");
  const json& v = j.at(key);
  if (!v.is_number_integer()) fail(source, "'" + key + "' must be an integer");
  auto n = v.get<int64_t>();
  if (n <= 0 || n > limit) {
    fail(source, "'" + key + "' = " + std::to_string(n) + " is out of range (1.." +
                     std::to_string(limit) + ")");
  }
  return static_cast<int>(n);
}

int positive_int_or(const json& j, const std::string& key, int fallback, const std::string& source,
                    int limit = 1 << 24) {
  if (!j.contains(key) || j.at(key).is_null()) return fallback;
  return positive_int(j, key, source, limit);
}

// x rounded to the nearest bfloat16 (ties to even).
float round_to_bfloat16(float x) {
  auto bits = std::bit_cast<uint32_t>(x);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return std::bit_cast<float>(bits & 0xFFFF0000u);
}

float positive_float(const json& j, const std::string& key, float fallback,
                     const std::string& source) {
  if (!j.contains(key) || j.at(key).is_null()) return fallback;
  const json& v = j.at(key);
  if (!v.is_number()) fail(source, "'" + key + "' must be a number");
  auto x = v.get<double>();
  if (!std::isfinite(x) || x <= 0) fail(source, "'" + key + "' must be positive and finite");
  return static_cast<float>(x);
}

float non_negative_float(const json& j, const std::string& key, float fallback,
                         const std::string& source) {
  if (j.contains(key) && j.at(key).is_number() && j.at(key).get<double>() == 0) return 0.0f;
  return positive_float(j, key, fallback, source);
}

void add_eos(const json& v, std::vector<int32_t>& out) {
  auto add = [&](const json& id) {
    if (!id.is_number_integer()) return;
    auto n = id.get<int64_t>();
    if (n < 0 || n > INT32_MAX) return;
    auto t = static_cast<int32_t>(n);
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  };
  if (v.is_array()) {
    for (const auto& id : v) add(id);
  } else {
    add(v);
  }
}

// Shared checks once the numbers are in.
void validate(ModelConfig& c, const std::string& source) {
  if (c.hidden_size % c.num_heads != 0 && c.head_dim == 0) {
    fail(source, "hidden size is not divisible by the number of heads");
  }
  if (c.head_dim == 0) c.head_dim = c.hidden_size / c.num_heads;
  if (c.head_dim % 2 != 0) fail(source, "head dimension must be even for RoPE");
  if (c.num_heads % c.num_kv_heads != 0) {
    fail(source, "attention heads (" + std::to_string(c.num_heads) +
                     ") must be a multiple of key/value heads (" + std::to_string(c.num_kv_heads) +
                     ")");
  }
  for (auto id : c.eos_token_ids) {
    if (id >= c.vocab_size) fail(source, "eos token id " + std::to_string(id) + " >= vocab size");
  }
}

RopeScaling rope_scaling_from_hf(const json& config, const std::string& source) {
  RopeScaling s;
  if (!config.contains("rope_scaling") || config["rope_scaling"].is_null()) return s;
  const json& r = config["rope_scaling"];
  if (!r.is_object()) fail(source, "'rope_scaling' must be an object");
  std::string type = r.value("rope_type", r.value("type", std::string()));
  if (type == "default") return s;
  if (type != "linear" && type != "llama3" && type != "yarn") {
    fail(source, "unsupported rope_scaling type '" + type + "'");
  }
  s.type = type;
  s.factor = positive_float(r, "factor", 1.0f, source);
  s.low_freq_factor = positive_float(r, "low_freq_factor", 1.0f, source);
  s.high_freq_factor = positive_float(r, "high_freq_factor", 4.0f, source);
  if (type == "yarn") s.original_max_position = 4096;  // mlx-lm's YaRN default
  if (r.contains("original_max_position_embeddings")) {
    s.original_max_position = positive_int(r, "original_max_position_embeddings", source);
  }
  s.beta_fast = positive_float(r, "beta_fast", 32.0f, source);
  s.beta_slow = positive_float(r, "beta_slow", 1.0f, source);
  s.mscale = positive_float(r, "mscale", 1.0f, source);
  s.mscale_all_dim = non_negative_float(r, "mscale_all_dim", 0.0f, source);
  if (r.contains("attention_factor") && !r["attention_factor"].is_null()) {
    s.attention_factor = positive_float(r, "attention_factor", 1.0f, source);
  }
  if (type == "llama3" && s.high_freq_factor <= s.low_freq_factor) {
    fail(source, "llama3 rope_scaling needs high_freq_factor > low_freq_factor");
  }
  return s;
}

std::string quant_mode(const json& q, const std::string& fallback, const std::string& source) {
  if (!q.contains("mode")) return fallback;
  if (!q["mode"].is_string()) fail(source, "quantization 'mode' must be a string");
  auto mode = q["mode"].get<std::string>();
  if (mode != "affine" && mode != "mxfp4" && mode != "mxfp8" && mode != "nvfp4") {
    fail(source, "unsupported quantization mode '" + mode + "'");
  }
  return mode;
}

}  // namespace

// mlx-lm's section: {"group_size", "bits", "mode"?, "<module path>": {...} or false}.
void read_quantization(const json& q, ModelConfig& c, const std::string& source) {
  c.quant_group_size = positive_int(q, "group_size", source, 1024);
  c.quant_mode = quant_mode(q, "affine", source);
  for (const auto& [key, value] : q.items()) {
    if (!value.is_object()) continue;
    const std::string at = "quantization." + key;
    c.quant_layers[key] = {positive_int(value, "group_size", at, 1024),
                           quant_mode(value, c.quant_mode, at)};
  }
}

namespace {

// Gemma 3's own fields, with mlx-lm's defaults. Its HF checkpoints are bfloat16, and
// the reference scales embeddings by sqrt(hidden) rounded to bfloat16.
void read_gemma3_hf(const json& config, ModelConfig& c, const std::string& source) {
  if (c.head_dim == 0) c.head_dim = 256;
  c.sliding_window = positive_int_or(config, "sliding_window", 512, source);
  c.sliding_window_pattern = positive_int_or(config, "sliding_window_pattern", 6, source, 4096);
  c.rope_local_theta = positive_float(config, "rope_local_base_freq", 10000.0f, source);
  c.query_pre_attn_scalar = positive_float(config, "query_pre_attn_scalar", 256.0f, source);
  c.embed_scale = round_to_bfloat16(std::sqrt(static_cast<float>(c.hidden_size)));
  c.norm_weight_offset = true;
  c.tie_word_embeddings = config.value("tie_word_embeddings", true);
}

// Qwen3-MoE's fields (Hugging Face names and defaults).
void read_experts_hf(const json& config, ModelConfig& c, const std::string& source) {
  c.num_experts = positive_int(config, "num_experts", source, 1 << 16);
  c.experts_per_token = positive_int(config, "num_experts_per_tok", source, c.num_experts);
  c.moe_intermediate_size = positive_int(config, "moe_intermediate_size", source);
  c.norm_topk_prob = config.value("norm_topk_prob", false);
  c.decoder_sparse_step = positive_int_or(config, "decoder_sparse_step", 1, source, 4096);
  if (config.contains("mlp_only_layers") && !config["mlp_only_layers"].is_null()) {
    const json& layers = config["mlp_only_layers"];
    if (!layers.is_array()) fail(source, "'mlp_only_layers' must be a list of layer indices");
    for (const auto& l : layers) {
      if (!l.is_number_integer() || l.get<int64_t>() < 0 || l.get<int64_t>() >= c.num_layers) {
        fail(source, "'mlp_only_layers' holds " + l.dump() + ", not a layer index");
      }
      c.mlp_only_layers.push_back(l.get<int>());
    }
  }
}

// gpt-oss's fields: experts in every layer, chosen by a softmax over the top logits (the
// renormalized top of a softmax), sliding and full layers as layer_types says
// (alternating, sliding first, when absent), experts shipped in MXFP4.
void read_gpt_oss_hf(const json& config, ModelConfig& c, const std::string& source) {
  c.num_experts = positive_int(config, "num_local_experts", source, 1 << 16);
  const char* per_token =
      config.contains("num_experts_per_tok") ? "num_experts_per_tok" : "experts_per_token";
  c.experts_per_token = positive_int(config, per_token, source, c.num_experts);
  c.moe_intermediate_size = c.intermediate_size;
  c.norm_topk_prob = true;
  c.swiglu_limit = positive_float(config, "swiglu_limit", 7.0f, source);
  c.sliding_window = positive_int_or(config, "sliding_window", 128, source);
  c.sliding_layers.assign(static_cast<size_t>(c.num_layers), false);
  const json types = config.value("layer_types", json());
  if (!types.is_null() && (!types.is_array() || types.size() != c.sliding_layers.size())) {
    fail(source, "'layer_types' must name the kind of each of the " + std::to_string(c.num_layers) +
                     " layers");
  }
  for (int i = 0; i < c.num_layers; ++i) {
    if (types.is_null()) {
      c.sliding_layers[i] = i % 2 == 0;
      continue;
    }
    const json& t = types[i];
    if (t != "sliding_attention" && t != "full_attention") {
      fail(source,
           "'layer_types' holds " + t.dump() + " (expected sliding_attention or full_attention)");
    }
    c.sliding_layers[i] = t == "sliding_attention";
  }
  const json q = config.value("quantization_config", json());
  if (q.is_object() && q.value("quant_method", "") == "mxfp4") {
    c.quant_mode = "mxfp4";
    c.quant_group_size = 32;
  }
}

// GLM-4.7-Flash's fields (glm4_moe_lite): latent attention with interleaved RoPE on the
// rotary part, experts after the first dense layers with a sigmoid router and shared
// experts. Only mlx-lm's choices: noaux_tc routing, experts in every later layer.
void read_glm4_moe_lite_hf(const json& config, ModelConfig& c, const std::string& source) {
  auto& m = c.mla;
  m.q_lora_rank = positive_int_or(config, "q_lora_rank", 0, source, 1 << 16);
  m.kv_lora_rank = positive_int(config, "kv_lora_rank", source, 1 << 16);
  m.qk_nope_head_dim = positive_int(config, "qk_nope_head_dim", source, 4096);
  m.qk_rope_head_dim = positive_int(config, "qk_rope_head_dim", source, 4096);
  m.v_head_dim = positive_int(config, "v_head_dim", source, 4096);
  if (m.qk_rope_head_dim % 2 != 0) fail(source, "'qk_rope_head_dim' must be even");
  c.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
  c.num_kv_heads = c.num_heads;
  c.rope_traditional = true;
  if (config.value("partial_rotary_factor", 1.0) != 1.0) {
    fail(source, "'partial_rotary_factor' other than 1 is not supported");
  }
  if (c.rope_scaling.type == "yarn" || c.rope_scaling.type == "llama3") {
    fail(source, "rope_scaling '" + c.rope_scaling.type +
                     "' is not supported with latent attention (only linear or none)");
  }
  c.num_experts = positive_int(config, "n_routed_experts", source, 1 << 16);
  c.experts_per_token = positive_int(config, "num_experts_per_tok", source, c.num_experts);
  c.moe_intermediate_size = positive_int(config, "moe_intermediate_size", source);
  c.norm_topk_prob = config.value("norm_topk_prob", true);
  c.num_shared_experts = positive_int_or(config, "n_shared_experts", 0, source, 1 << 10);
  const json dense = config.value("first_k_dense_replace", json(0));
  if (!dense.is_number_integer() || dense.get<int64_t>() < 0 ||
      dense.get<int64_t>() > c.num_layers) {
    fail(source, "'first_k_dense_replace' must be a number of layers (0.." +
                     std::to_string(c.num_layers) + ")");
  }
  c.first_dense_layers = dense.get<int>();
  if (positive_int_or(config, "moe_layer_freq", 1, source) != 1) {
    fail(source, "'moe_layer_freq' other than 1 is not supported");
  }
  if (config.value("topk_method", "noaux_tc") != "noaux_tc" ||
      config.value("scoring_func", "sigmoid") != "sigmoid") {
    fail(source, "only the 'noaux_tc' top-k method with 'sigmoid' scores is supported");
  }
  c.sigmoid_routing = true;
  c.routed_scaling = positive_float(config, "routed_scaling_factor", 1.0f, source);
  c.expert_groups = positive_int_or(config, "n_group", 1, source, c.num_experts);
  c.topk_groups = positive_int_or(config, "topk_group", 1, source, c.expert_groups);
  if (c.num_experts % c.expert_groups != 0 ||
      (c.expert_groups > 1 && c.num_experts / c.expert_groups < 2)) {
    fail(source, "'n_routed_experts' must split into 'n_group' groups of at least 2");
  }
}

// Qwen3-Next's and Qwen3.5's fields: gated delta-net layers, attention every
// full_attention_interval-th layer (or where layer_types says) with an output gate and
// RoPE on part of each head (Qwen3.5 states both in rope_parameters), and experts with a
// gated shared expert where the config has them.
void read_qwen3_next_hf(const json& config, ModelConfig& c, const std::string& source) {
  auto& l = c.linear;
  l.key_heads = positive_int(config, "linear_num_key_heads", source, 4096);
  l.value_heads = positive_int(config, "linear_num_value_heads", source, 4096);
  l.key_head_dim = positive_int(config, "linear_key_head_dim", source, 4096);
  l.value_head_dim = positive_int(config, "linear_value_head_dim", source, 4096);
  l.conv_kernel = positive_int_or(config, "linear_conv_kernel_dim", 4, source, 64);
  if (l.value_heads % l.key_heads != 0) {
    fail(source, "'linear_num_value_heads' must be a multiple of 'linear_num_key_heads'");
  }
  if (l.conv_kernel < 2) fail(source, "'linear_conv_kernel_dim' must be at least 2");
  c.recurrent_layers.assign(static_cast<size_t>(c.num_layers), false);
  const json types = config.value("layer_types", json());
  const int interval = positive_int_or(config, "full_attention_interval", 4, source, 4096);
  if (!types.is_null() && (!types.is_array() || types.size() != c.recurrent_layers.size())) {
    fail(source, "'layer_types' must name the kind of each of the " + std::to_string(c.num_layers) +
                     " layers");
  }
  for (int i = 0; i < c.num_layers; ++i) {
    if (types.is_null()) {
      c.recurrent_layers[static_cast<size_t>(i)] = (i + 1) % interval != 0;
      continue;
    }
    const json& t = types[static_cast<size_t>(i)];
    if (t != "linear_attention" && t != "full_attention") {
      fail(source,
           "'layer_types' holds " + t.dump() + " (expected linear_attention or full_attention)");
    }
    c.recurrent_layers[static_cast<size_t>(i)] = t == "linear_attention";
  }
  double partial = config.value("partial_rotary_factor", 0.25);
  const json rope = config.value("rope_parameters", json());
  if (rope.is_object()) {
    const std::string type = rope.value("rope_type", rope.value("type", std::string("default")));
    if (type != "default") fail(source, "rope_parameters type '" + type + "' is not supported");
    c.rope_theta = positive_float(rope, "rope_theta", 100000.0f, source);
    partial = rope.value("partial_rotary_factor", 0.25);
  }
  if (!c.rope_scaling.type.empty() && c.rope_scaling.type != "linear") {
    fail(source, "rope_scaling '" + c.rope_scaling.type + "' is not supported with partial RoPE");
  }
  const int head = c.head_dim > 0 ? c.head_dim : c.hidden_size / c.num_heads;
  c.rotary_dims = static_cast<int>(head * partial);
  if (!(partial > 0 && partial <= 1) || c.rotary_dims < 2 || c.rotary_dims % 2 != 0) {
    fail(source, "'partial_rotary_factor' must give an even number of rotated dimensions");
  }
  c.attention_output_gate = true;
  if (config.value("num_experts", 0) > 0) {
    read_experts_hf(config, c, source);
    if (!config.contains("norm_topk_prob")) c.norm_topk_prob = c.architecture != "qwen3_next";
    c.shared_expert_intermediate_size =
        positive_int(config, "shared_expert_intermediate_size", source);
  }
}

// llama.cpp's deepseek2 (GLM-4.7-Flash, DeepSeek V3): latent attention stated as one
// wide "head" (key_length = latent + rotary widths), the per-head widths in the *_mla
// keys (absent in files from before the absorbed split, where kv_b stays whole);
// interleaved RoPE; sigmoid-gated experts after the leading dense blocks.
void read_deepseek2_gguf(const json& meta, ModelConfig& c, const std::string& source) {
  const std::string a = "deepseek2.";
  auto& m = c.mla;
  m.q_lora_rank = positive_int_or(meta, a + "attention.q_lora_rank", 0, source, 1 << 16);
  m.kv_lora_rank = positive_int(meta, a + "attention.kv_lora_rank", source, 1 << 16);
  m.qk_rope_head_dim = positive_int(meta, a + "rope.dimension_count", source, 4096);
  const bool absorbed = meta.contains(a + "attention.key_length_mla");
  const int key = positive_int(
      meta, a + (absorbed ? "attention.key_length_mla" : "attention.key_length"), source, 1 << 16);
  if (key <= m.qk_rope_head_dim || m.qk_rope_head_dim % 2 != 0) {
    fail(source, "the key length must exceed an even rotary width");
  }
  m.qk_nope_head_dim = key - m.qk_rope_head_dim;
  m.v_head_dim =
      positive_int(meta, a + (absorbed ? "attention.value_length_mla" : "attention.value_length"),
                   source, 1 << 16);
  c.head_dim = key;
  c.num_kv_heads = c.num_heads;
  c.rope_traditional = true;
  if (c.rope_scaling.type == "yarn") {
    fail(source, "YaRN rope scaling is not supported with latent attention");
  }
  if (c.num_experts == 0) fail(source, "a deepseek2 model without experts is not supported");
  if (meta.value(a + "expert_gating_func", 1) != 2) {
    fail(source, "only sigmoid expert gating (expert_gating_func 2) is supported");
  }
  c.sigmoid_routing = true;
  c.norm_topk_prob = meta.value(a + "expert_weights_norm", false);
  c.routed_scaling = positive_float(meta, a + "expert_weights_scale", 1.0f, source);
  c.num_shared_experts = meta.value(a + "expert_shared_count", 0) > 0
                             ? positive_int(meta, a + "expert_shared_count", source, 1 << 10)
                             : 0;
  c.first_dense_layers =
      meta.value(a + "leading_dense_block_count", 0) > 0
          ? positive_int(meta, a + "leading_dense_block_count", source, c.num_layers)
          : 0;
  c.expert_groups = positive_int_or(meta, a + "expert_group_count", 1, source, c.num_experts);
  c.topk_groups = positive_int_or(meta, a + "expert_group_used_count", 1, source, c.expert_groups);
  if (c.num_experts % c.expert_groups != 0) {
    fail(source, "the experts must split into expert_group_count groups");
  }
}

}  // namespace

EncoderConfig encoder_config_from_hf(const json& config, const std::string& source) {
  if (!config.is_object()) fail(source, "config.json must be a JSON object");
  EncoderConfig c;
  c.architecture = config.value("model_type", "");
  c.vocab_size = positive_int(config, "vocab_size", source);
  c.hidden_size = positive_int(config, "hidden_size", source);
  c.num_layers = positive_int(config, "num_hidden_layers", source, 4096);
  c.num_heads = positive_int(config, "num_attention_heads", source, 4096);
  if (c.hidden_size % c.num_heads != 0) {
    fail(source, "'hidden_size' must be a multiple of 'num_attention_heads'");
  }
  c.intermediate_size = positive_int(config, "intermediate_size", source);
  c.max_position_embeddings = positive_int_or(config, "max_position_embeddings", 512, source);
  c.type_vocab_size = positive_int_or(config, "type_vocab_size", 2, source);
  c.layer_norm_eps = positive_float(config, "layer_norm_eps", 1e-12f, source);
  const std::string act = config.value("hidden_act", "gelu");
  if (act != "gelu") fail(source, "hidden_act '" + act + "' is not supported (only 'gelu')");
  const std::string position = config.value("position_embedding_type", "absolute");
  if (position != "absolute") {
    fail(source, "position_embedding_type '" + position + "' is not supported (only 'absolute')");
  }
  return c;
}

ModelConfig config_from_hf(const json& outer, const json& generation, const std::string& source) {
  if (!outer.is_object()) fail(source, "config.json must be a JSON object");
  // A multimodal model's language model (Qwen3.5) states its fields in text_config; the
  // outer model_type names the architecture.
  json config = outer;
  if (outer.contains("text_config") && outer["text_config"].is_object()) {
    config.update(outer["text_config"]);
    config["model_type"] = outer.value("model_type", json());
  }
  ModelConfig c;
  if (!config.contains("model_type") || !config["model_type"].is_string()) {
    fail(source, "missing 'model_type'");
  }
  c.architecture = config["model_type"].get<std::string>();
  c.vocab_size = positive_int(config, "vocab_size", source);
  c.hidden_size = positive_int(config, "hidden_size", source);
  c.num_layers = positive_int(config, "num_hidden_layers", source, 4096);
  c.num_heads = positive_int(config, "num_attention_heads", source, 4096);
  c.num_kv_heads =
      config.contains("num_key_value_heads") && !config["num_key_value_heads"].is_null()
          ? positive_int(config, "num_key_value_heads", source, 4096)
          : c.num_heads;
  if (config.contains("head_dim") && !config["head_dim"].is_null()) {
    c.head_dim = positive_int(config, "head_dim", source, 4096);
  }
  c.intermediate_size = positive_int(config, "intermediate_size", source);
  c.rms_norm_eps = positive_float(config, "rms_norm_eps", 1e-6f, source);
  c.rope_theta = positive_float(config, "rope_theta", 10000.0f, source);
  c.rope_scaling = rope_scaling_from_hf(config, source);
  c.tie_word_embeddings = config.value("tie_word_embeddings", false);
  if (c.architecture == "gemma3_text") read_gemma3_hf(config, c, source);
  if (c.architecture == "qwen3_moe") read_experts_hf(config, c, source);
  if (c.architecture == "gpt_oss") read_gpt_oss_hf(config, c, source);
  if (c.architecture == "glm4_moe_lite") read_glm4_moe_lite_hf(config, c, source);
  if (c.architecture == "qwen3_next" || c.architecture == "qwen3_5" ||
      c.architecture == "qwen3_5_moe") {
    read_qwen3_next_hf(config, c, source);
  }
  c.attention_bias = config.value("attention_bias", false);
  if (config.contains("max_position_embeddings")) {
    c.max_position_embeddings = positive_int(config, "max_position_embeddings", source);
  }
  if (config.contains("eos_token_id")) add_eos(config["eos_token_id"], c.eos_token_ids);
  if (generation.is_object() && generation.contains("eos_token_id")) {
    add_eos(generation["eos_token_id"], c.eos_token_ids);
  }
  if (config.contains("quantization") && config["quantization"].is_object()) {
    read_quantization(config["quantization"], c, source);
  }
  validate(c, source);
  return c;
}

ModelConfig config_from_gguf(const json& meta, const std::string& source) {
  if (!meta.contains("general.architecture") || !meta["general.architecture"].is_string()) {
    fail(source, "missing 'general.architecture'");
  }
  ModelConfig c;
  c.architecture = meta["general.architecture"].get<std::string>();
  const std::string a = c.architecture + ".";
  c.hidden_size = positive_int(meta, a + "embedding_length", source);
  c.num_layers = positive_int(meta, a + "block_count", source, 4096);
  c.num_heads = positive_int(meta, a + "attention.head_count", source, 4096);
  c.num_kv_heads = meta.contains(a + "attention.head_count_kv")
                       ? positive_int(meta, a + "attention.head_count_kv", source, 4096)
                       : c.num_heads;
  if (meta.contains(a + "attention.key_length")) {
    c.head_dim = positive_int(meta, a + "attention.key_length", source, 4096);
  }
  if (meta.contains(a + "expert_count")) {
    // llama.cpp's qwen3moe: every layer has experts, their weights renormalized.
    c.num_experts = positive_int(meta, a + "expert_count", source, 1 << 16);
    c.experts_per_token = positive_int(meta, a + "expert_used_count", source, c.num_experts);
    c.moe_intermediate_size = positive_int(meta, a + "expert_feed_forward_length", source);
    c.norm_topk_prob = true;
  }
  c.intermediate_size = c.num_experts > 0 && !meta.contains(a + "feed_forward_length")
                            ? c.moe_intermediate_size
                            : positive_int(meta, a + "feed_forward_length", source);
  c.rms_norm_eps = positive_float(meta, a + "attention.layer_norm_rms_epsilon", 1e-6f, source);
  c.rope_theta = positive_float(meta, a + "rope.freq_base", 10000.0f, source);
  if (meta.contains(a + "context_length")) {
    c.max_position_embeddings = positive_int(meta, a + "context_length", source);
  }
  if (meta.contains(a + "rope.scaling.type")) {
    const auto& t = meta[a + "rope.scaling.type"];
    if (t == "linear") {
      c.rope_scaling.type = "linear";
      c.rope_scaling.factor = positive_float(meta, a + "rope.scaling.factor", 1.0f, source);
    } else if (t == "yarn") {
      auto& s = c.rope_scaling;
      s.type = "yarn";
      s.factor = positive_float(meta, a + "rope.scaling.factor", 1.0f, source);
      s.original_max_position =
          positive_int_or(meta, a + "rope.scaling.original_context_length", 4096, source);
      s.beta_fast = positive_float(meta, a + "rope.scaling.yarn_beta_fast", 32.0f, source);
      s.beta_slow = positive_float(meta, a + "rope.scaling.yarn_beta_slow", 1.0f, source);
    } else if (t != "none") {
      fail(source, "unsupported rope scaling type " + t.dump());
    }
  }
  // llama.cpp's converter permutes Q/K rows of llama models for interleaved RoPE.
  c.rope_traditional = c.architecture == "llama";
  if (c.architecture == "gemma3") {
    // As llama.cpp runs it: every 6th layer global, local base 10000, the scale from
    // the head size, embeddings times sqrt(hidden); norm weights already hold 1 + w.
    c.sliding_window = positive_int_or(meta, a + "attention.sliding_window", 512, source);
    c.sliding_window_pattern = 6;
    c.query_pre_attn_scalar = static_cast<float>(c.head_dim ? c.head_dim : 256);
    c.embed_scale = std::sqrt(static_cast<float>(c.hidden_size));
  }
  if (c.architecture == "gpt-oss") {
    // As llama.cpp runs it: even layers slide, the experts gate with the clamp at 7.
    c.sliding_window = positive_int_or(meta, a + "attention.sliding_window", 128, source);
    c.sliding_layers.assign(static_cast<size_t>(c.num_layers), false);
    for (int i = 0; i < c.num_layers; i += 2) c.sliding_layers[i] = true;
    c.swiglu_limit = 7.0f;
  }
  if (c.architecture == "deepseek2") read_deepseek2_gguf(meta, c, source);
  if (meta.contains("tokenizer.ggml.tokens") && meta["tokenizer.ggml.tokens"].is_array()) {
    c.vocab_size = static_cast<int>(meta["tokenizer.ggml.tokens"].size());
  }
  if (meta.contains(a + "vocab_size")) c.vocab_size = positive_int(meta, a + "vocab_size", source);
  if (c.vocab_size <= 0) fail(source, "cannot tell the vocabulary size");
  for (const char* key : {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id"}) {
    if (meta.contains(key)) add_eos(meta[key], c.eos_token_ids);
  }
  validate(c, source);
  return c;
}

}  // namespace heron::model
