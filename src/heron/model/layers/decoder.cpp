#include "heron/model/layers/decoder.h"

#include <mlx/ops.h>

#include "heron/model/layer_caches.h"
#include "heron/model/layers/mtp_head.h"

namespace heron::model {

namespace mx = mlx::core;

DecoderModel::DecoderModel(const ModelConfig& c, Weights& w, DecoderOptions options) : Model(c) {
  embed_ = Embedding::load(w, "model.embed_tokens");
  auto rope = std::make_shared<const Rope>(c, w.take_optional("rope_freqs.weight"));
  for (int i = 0; i < c.num_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i);
    auto attention = [&]() -> decltype(Block::attention) {
      if (c.layer_is_recurrent(i)) return GatedDeltaNet::load(w, p + ".linear_attn", c);
      if (c.latent_attention()) return LatentAttention::load(w, p + ".self_attn", c);
      return Attention::load(w, p + ".self_attn", c, rope, options.qk_norm, c.window_of_layer(i));
    };
    blocks_.push_back(Block{
        RMSNorm::load(w, p + ".input_layernorm.weight", c.rms_norm_eps, c.norm_weight_offset),
        RMSNorm::load(w, p + ".post_attention_layernorm.weight", c.rms_norm_eps,
                      c.norm_weight_offset),
        attention(),
        c.layer_has_experts(i) ? decltype(Block::mlp)(MixtureOfExperts::load(w, p + ".mlp", c))
                               : decltype(Block::mlp)(GatedMLP::load(w, p + ".mlp")),
    });
  }
  norm_ = RMSNorm::load(w, "model.norm.weight", c.rms_norm_eps, c.norm_weight_offset);
  if (!c.tie_word_embeddings || w.has("lm_head.weight")) lm_head_ = Linear::load(w, "lm_head");
  if (options.prediction_head && w.has("mtp.fc.weight")) {
    mtp_ = MtpHead::load(w, "mtp", c, rope, embed_, lm_head_ ? &*lm_head_ : nullptr);
  }
}

Output decoder_output(const mx::array& h, const Batch& batch, const RMSNorm& norm,
                      const std::function<mx::array(const mx::array&)>& head, bool want_hiddens) {
  const bool last = batch.logits_for == LogitsFor::Last && h.shape(1) > 1;
  auto final_position = [&](const mx::array& x) {
    if (!last) return x;
    if (batch.query_lens.size() == 1) return mx::slice(x, {0, x.shape(1) - 1, 0}, x.shape());
    // Packed rows: each row's last token, one row each.
    std::vector<int> ends;
    int end = 0;
    for (int n : batch.query_lens) ends.push_back((end += n) - 1);
    const auto R = static_cast<int>(ends.size());
    return mx::reshape(mx::take(x, mx::array(ends.data(), {R}, mx::int32), 1), {R, 1, x.shape(2)});
  };
  if (!want_hiddens) return {head(norm(final_position(h))), std::nullopt};
  auto hiddens = norm(h);
  return {head(final_position(hiddens)), hiddens};
}

Output DecoderModel::forward(const Batch& batch, cache::Caches& caches, bool want_hiddens) const {
  auto h = embed_(batch.input_ids);
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const auto& b = blocks_[i];
    const auto attention_in = b.input_norm(h);
    h = mx::add(h, std::visit([&](const auto& a) { return a(attention_in, batch, *caches[i]); },
                              b.attention));
    const auto normed = b.post_attention_norm(h);
    h = mx::add(h, std::visit([&](const auto& mlp) { return mlp(normed); }, b.mlp));
  }
  return decoder_output(
      h, batch, norm_,
      [&](const mx::array& x) { return lm_head_ ? (*lm_head_)(x) : embed_.as_linear(x); },
      want_hiddens);
}

cache::Caches DecoderModel::make_caches() const {
  return make_layer_caches(config());
}

}  // namespace heron::model
