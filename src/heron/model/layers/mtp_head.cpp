#include "heron/model/layers/mtp_head.h"

#include <mlx/ops.h>

#include "heron/cache/kv_cache.h"

namespace heron::model {

namespace mx = mlx::core;

std::unique_ptr<MtpHead> MtpHead::load(Weights& w, const std::string& prefix, const ModelConfig& c,
                                       std::shared_ptr<const Rope> rope, const Embedding& embed,
                                       const Linear* lm_head) {
  ModelConfig own = c;
  own.norm_weight_offset = true;
  const std::string layer = prefix + ".layers.0";
  auto attention = Attention::load(w, layer + ".self_attn", own, std::move(rope), /*qk_norm=*/true);
  auto mlp =
      own.num_experts > 0
          ? std::variant<GatedMLP, MixtureOfExperts>(MixtureOfExperts::load(w, layer + ".mlp", own))
          : std::variant<GatedMLP, MixtureOfExperts>(GatedMLP::load(w, layer + ".mlp"));
  std::unique_ptr<MtpHead> head(new MtpHead(embed, lm_head, std::move(attention), std::move(mlp)));
  auto norm = [&](const std::string& name) {
    return RMSNorm::load(w, name, c.rms_norm_eps, /*offset=*/true);
  };
  head->embed_norm_ = norm(prefix + ".pre_fc_norm_embedding.weight");
  head->hidden_norm_ = norm(prefix + ".pre_fc_norm_hidden.weight");
  head->input_norm_ = norm(layer + ".input_layernorm.weight");
  head->post_attention_norm_ = norm(layer + ".post_attention_layernorm.weight");
  head->norm_ = norm(prefix + ".norm.weight");
  head->fc_ = Linear::load(w, prefix + ".fc");
  return head;
}

Output MtpHead::forward(const mx::array& tokens, const mx::array& hiddens, int offset,
                        cache::Caches& caches) const {
  const auto embedded = embed_norm_(embed_(tokens));
  auto h =
      fc_(mx::concatenate({embedded, hidden_norm_(mx::astype(hiddens, embedded.dtype()))}, -1));
  const Batch batch{tokens, mx::array({offset}), {tokens.shape(1)}, LogitsFor::All};
  h = mx::add(h, attention_(input_norm_(h), batch, *caches[0]));
  const auto normed = post_attention_norm_(h);
  h = mx::add(h, std::visit([&](const auto& mlp) { return mlp(normed); }, mlp_));
  h = norm_(h);
  return {lm_head_ ? (*lm_head_)(h) : embed_.as_linear(h), h};
}

cache::Caches MtpHead::make_caches() const {
  cache::Caches caches;
  caches.push_back(std::make_unique<cache::KVCache>());
  return caches;
}

}  // namespace heron::model
