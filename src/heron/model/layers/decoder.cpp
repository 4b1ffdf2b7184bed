#include "heron/model/layers/decoder.h"

#include <tuple>

#include <mlx/ops.h>

#include "heron/cache/kv_cache.h"

namespace heron::model {

namespace mx = mlx::core;

DecoderModel::DecoderModel(const ModelConfig& c, Weights& w, DecoderOptions options) : Model(c) {
  embed_ = Embedding::load(w, "model.embed_tokens");
  auto rope = std::make_shared<const Rope>(c, w.take_optional("rope_freqs.weight"));
  for (int i = 0; i < c.num_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i);
    blocks_.push_back(Block{
        RMSNorm::load(w, p + ".input_layernorm.weight", c.rms_norm_eps),
        RMSNorm::load(w, p + ".post_attention_layernorm.weight", c.rms_norm_eps),
        Attention::load(w, p + ".self_attn", c, rope, options.qk_norm),
        GatedMLP::load(w, p + ".mlp"),
    });
  }
  norm_ = RMSNorm::load(w, "model.norm.weight", c.rms_norm_eps);
  if (!c.tie_word_embeddings || w.has("lm_head.weight")) lm_head_ = Linear::load(w, "lm_head");
}

Output DecoderModel::forward(const Batch& batch, cache::Caches& caches, bool want_hiddens) const {
  auto h = embed_(batch.input_ids);
  // x is the normalised input of the next sub-layer; each residual add comes fused
  // with the norm that follows it (the next block's, or the final one).
  auto x = blocks_[0].input_norm(h);
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const auto& b = blocks_[i];
    std::tie(h, x) = b.post_attention_norm.add_and_norm(h, b.attention(x, batch, *caches[i]));
    const auto& next_norm = i + 1 < blocks_.size() ? blocks_[i + 1].input_norm : norm_;
    std::tie(h, x) = next_norm.add_and_norm(h, b.mlp(x));
  }
  if (batch.logits_for == LogitsFor::Last && x.shape(1) > 1) {
    x = mx::slice(x, {0, x.shape(1) - 1, 0}, x.shape());
  }
  auto logits = lm_head_ ? (*lm_head_)(x) : embed_.as_linear(x);
  return {logits, want_hiddens ? std::optional<mx::array>(x) : std::nullopt};
}

cache::Caches DecoderModel::make_caches() const {
  return cache::make_kv_caches(config().num_layers);
}

}  // namespace heron::model
