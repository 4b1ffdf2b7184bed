#pragma once
// Architecture hyper-parameters, read from a Hugging Face config.json or from GGUF
// metadata, validated once so model code can trust them.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace heron::model {

struct RopeScaling {
  std::string type;  // "" (none), "linear", "llama3", "yarn"
  float factor = 1.0f;
  float low_freq_factor = 1.0f;
  float high_freq_factor = 4.0f;
  int original_max_position = 8192;
  // YaRN: the band of rotations blended between scaled and unscaled frequencies, and the
  // attention factor (computed from mscale / mscale_all_dim unless given).
  float beta_fast = 32.0f;
  float beta_slow = 1.0f;
  float mscale = 1.0f;
  float mscale_all_dim = 0.0f;
  std::optional<float> attention_factor;
};

// How one layer's weights are quantized (bits follow from the packed shapes).
struct QuantScheme {
  int group_size = 32;
  std::string mode = "affine";
};

// Multi-head latent attention (DeepSeek V2/V3, GLM-4.7-Flash): keys and values are
// projected from one compressed latent per position, which is all the cache keeps
// (kv_lora_rank values) beside a rotary key shared by the heads (qk_rope_head_dim).
struct LatentAttentionDims {
  int q_lora_rank = 0;   // 0: queries straight from the hidden state
  int kv_lora_rank = 0;  // 0: not latent attention
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;
};

// Gated delta-net linear attention (Qwen3-Next, Qwen3.5): layers that keep a recurrent
// state of constant size instead of keys and values. Each has a causal depthwise
// convolution over the last conv_kernel inputs and the gated delta rule over
// value_heads states of value_head_dim x key_head_dim.
struct LinearAttentionDims {
  int key_heads = 0;  // 0: no linear attention
  int value_heads = 0;
  int key_head_dim = 0;
  int value_head_dim = 0;
  int conv_kernel = 4;
  // The channels the convolution runs over: queries, keys and values side by side.
  int conv_channels() const { return 2 * key_heads * key_head_dim + value_heads * value_head_dim; }
};

struct ModelConfig {
  std::string architecture;  // registry key: "llama", "qwen3"
  int vocab_size = 0;
  int hidden_size = 0;
  int num_layers = 0;
  int num_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  int intermediate_size = 0;
  float rms_norm_eps = 1e-6f;
  float rope_theta = 10000.0f;
  // GGUF llama files carry Q/K rows permuted for interleaved ("traditional") RoPE;
  // rotating pairs the same way is cheaper than un-permuting quantized rows.
  bool rope_traditional = false;
  RopeScaling rope_scaling;
  bool tie_word_embeddings = false;
  int rotary_dims = 0;  // RoPE turns the first rotary_dims of each head (0: all of them)
  // The query projection also gives a sigmoid gate per output feature (Qwen3-Next).
  bool attention_output_gate = false;
  // Gemma 3: every sliding_window_pattern-th layer is global, the others attend to the
  // last sliding_window positions with RoPE base rope_local_theta (0: all global).
  int sliding_window = 0;
  int sliding_window_pattern = 1;
  // gpt-oss names each layer's kind (layer_types): when set, it decides over the pattern.
  std::vector<bool> sliding_layers;
  // Layer i's window: sliding_window, or 0 for a global layer.
  int window_of_layer(int i) const {
    if (!sliding_layers.empty()) return sliding_layers.at(i) ? sliding_window : 0;
    return sliding_window == 0 || (i + 1) % sliding_window_pattern == 0 ? 0 : sliding_window;
  }
  float rope_local_theta = 10000.0f;
  float query_pre_attn_scalar = 0.0f;  // attention scale is its -1/2 power; 0: head_dim
  float embed_scale = 1.0f;            // embeddings are multiplied by it
  bool norm_weight_offset = false;     // RMSNorm scales by 1 + weight (Gemma's HF weights)
  bool attention_bias = false;
  // Mixture of experts (Qwen3-MoE): the feed-forward of layer i is num_experts gated
  // MLPs of moe_intermediate_size, experts_per_token of them chosen per token by a
  // softmax router, unless the layer is dense (layer_has_experts). 0 experts: dense model.
  int num_experts = 0;
  int experts_per_token = 0;
  int moe_intermediate_size = 0;
  bool norm_topk_prob = false;  // the chosen experts' weights are renormalized to sum to 1
  int decoder_sparse_step = 1;  // every step-th layer has experts
  float swiglu_limit = 0.0f;    // > 0: the experts gate as gpt-oss does (clamped_swiglu)
  std::vector<int> mlp_only_layers;
  int first_dense_layers = 0;  // the first layers have a dense MLP (GLM's first_k_dense_replace)
  // GLM-4.7-Flash's router: sigmoid scores, chosen after adding a per-expert correction
  // bias (the router's e_score_correction_bias), the best topk_groups of expert_groups
  // groups first; the chosen scores (renormalized where norm_topk_prob) times
  // routed_scaling. Softmax routers (Qwen3-MoE, gpt-oss) otherwise.
  bool sigmoid_routing = false;
  int expert_groups = 1;
  int topk_groups = 1;
  float routed_scaling = 1.0f;
  int num_shared_experts = 0;  // always-on experts of width moe_intermediate_size each
  // Qwen's one shared expert of its own width, its output scaled by a sigmoid gate
  // (shared_expert, shared_expert_gate); 0: none.
  int shared_expert_intermediate_size = 0;
  bool layer_has_experts(int i) const {
    return num_experts > 0 && i >= first_dense_layers && (i + 1) % decoder_sparse_step == 0 &&
           std::find(mlp_only_layers.begin(), mlp_only_layers.end(), i) == mlp_only_layers.end();
  }
  LatentAttentionDims mla;
  bool latent_attention() const { return mla.kv_lora_rank > 0; }
  // Values one layer's full cache keeps per position: keys and values, or a latent and
  // its rotary key.
  int cached_values_per_token() const {
    return latent_attention() ? mla.kv_lora_rank + mla.qk_rope_head_dim
                              : 2 * num_kv_heads * head_dim;
  }
  LinearAttentionDims linear;
  std::vector<bool> recurrent_layers;  // layer i is linear attention (empty: none)
  bool layer_is_recurrent(int i) const {
    return !recurrent_layers.empty() && recurrent_layers.at(static_cast<size_t>(i));
  }
  // Layers whose cache grows with the context (the others keep a constant state).
  int attention_layers() const {
    return num_layers -
           static_cast<int>(std::count(recurrent_layers.begin(), recurrent_layers.end(), true));
  }
  int max_position_embeddings = 4096;
  std::vector<int32_t> eos_token_ids;
  int quant_group_size = 32;          // for quantized weights
  std::string quant_mode = "affine";  // affine, mxfp4, mxfp8, nvfp4 (MLX's modes)
  // Per-layer overrides from an mlx-lm "quantization" section: module path -> scheme.
  std::map<std::string, QuantScheme> quant_layers;
};

// What an encoder's config.json says that its callers need.
struct EncoderConfig {
  std::string architecture;  // "bert"
  int vocab_size = 0;
  int hidden_size = 0;
  int num_layers = 0;
  int num_heads = 0;
  int intermediate_size = 0;
  int max_position_embeddings = 512;
  int type_vocab_size = 2;
  float layer_norm_eps = 1e-12f;
};

// `generation` is generation_config.json (or null); its eos_token_id joins config's.
ModelConfig config_from_hf(const nlohmann::json& config, const nlohmann::json& generation,
                           const std::string& source);
ModelConfig config_from_gguf(const nlohmann::json& metadata, const std::string& source);
// An encoder's config.json (model_type "bert").
EncoderConfig encoder_config_from_hf(const nlohmann::json& config, const std::string& source);
// Reads mlx-lm's "quantization" section ({"group_size", "bits", "mode"?, "<module path>":
// {...}}) into c.quant_group_size, quant_mode and quant_layers.
void read_quantization(const nlohmann::json& section, ModelConfig& c, const std::string& source);

}  // namespace heron::model
