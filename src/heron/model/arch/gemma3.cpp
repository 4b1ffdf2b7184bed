// Gemma 3 (text): sliding-window layers with a local RoPE base interleaved with global
// layers (every sliding_window_pattern-th), q/k norms, a norm after attention and
// around the MLP as well as before, a GELU-tanh gated MLP, embeddings scaled by
// sqrt(hidden) and a tied output head. Sliding-window layers keep a rotating cache of
// their window, global layers a full KV cache.
#include <mlx/ops.h>

#include "heron/model/arch/archs.h"
#include "heron/model/layer_caches.h"
#include "heron/model/layers/attention.h"
#include "heron/model/layers/decoder.h"
#include "heron/model/layers/mlp.h"

namespace heron::model::arch {

namespace {

namespace mx = mlx::core;

class Gemma3 : public Model {
 public:
  Gemma3(const ModelConfig& c, Weights& w) : Model(c) {
    embed_ = Embedding::load(w, "model.embed_tokens");
    auto global_rope = std::make_shared<const Rope>(c);
    ModelConfig local = c;
    local.rope_theta = c.rope_local_theta;
    local.rope_scaling = {};
    auto local_rope = std::make_shared<const Rope>(local);
    auto norm = [&](const std::string& name) {
      return RMSNorm::load(w, name, c.rms_norm_eps, c.norm_weight_offset);
    };
    for (int i = 0; i < c.num_layers; ++i) {
      const std::string p = "model.layers." + std::to_string(i);
      const bool global = c.window_of_layer(i) == 0;
      blocks_.push_back(Block{
          norm(p + ".input_layernorm.weight"),
          norm(p + ".post_attention_layernorm.weight"),
          norm(p + ".pre_feedforward_layernorm.weight"),
          norm(p + ".post_feedforward_layernorm.weight"),
          Attention::load(w, p + ".self_attn", c, global ? global_rope : local_rope,
                          /*qk_norm=*/true, c.window_of_layer(i)),
          GatedMLP::load(w, p + ".mlp", Activation::GeluTanh),
      });
    }
    norm_ = norm("model.norm.weight");
    if (w.has("lm_head.weight")) lm_head_ = Linear::load(w, "lm_head");
  }

  Output forward(const Batch& batch, cache::Caches& caches, bool want_hiddens) const override {
    auto h = embed_(batch.input_ids);
    h = mx::multiply(h, mx::array(config().embed_scale, h.dtype()));
    for (size_t i = 0; i < blocks_.size(); ++i) {
      const auto& b = blocks_[i];
      h = mx::add(h, b.post_attention_norm(b.attention(b.input_norm(h), batch, *caches[i])));
      h = mx::add(h, b.post_feedforward_norm(b.mlp(b.pre_feedforward_norm(h))));
    }
    return decoder_output(
        h, batch, norm_,
        [&](const mx::array& x) { return lm_head_ ? (*lm_head_)(x) : embed_.as_linear(x); },
        want_hiddens);
  }

  cache::Caches make_caches() const override { return make_layer_caches(config()); }
  std::optional<SharedLayers> shared_layers() const override {
    return SharedLayers{embed_, norm_, lm_head_ ? &*lm_head_ : nullptr};
  }

 private:
  struct Block {
    RMSNorm input_norm, post_attention_norm, pre_feedforward_norm, post_feedforward_norm;
    Attention attention;
    GatedMLP mlp;
  };
  Embedding embed_;
  std::vector<Block> blocks_;
  RMSNorm norm_;
  std::optional<Linear> lm_head_;  // absent when tied to the embedding
};

}  // namespace

std::unique_ptr<Model> build_gemma3(const ModelConfig& config, Weights& weights) {
  return std::make_unique<Gemma3>(config, weights);
}

}  // namespace heron::model::arch
