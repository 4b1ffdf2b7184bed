#include "heron/model/layers/latent_attention.h"

#include <cmath>

#include <mlx/ops.h>
#include <mlx/transforms.h>

#include "heron/core/error.h"
#include "heron/kernels/attention.h"
#include "heron/model/layers/by_row.h"

namespace heron::model {

namespace mx = mlx::core;

namespace {

// kv_b_proj [heads * (nope + v), rank] as the two per-head projections: the key part
// transposed, taking nope-wide queries into the latent space, and the value part. A
// quantized kv_b_proj is dequantized to be split and each part quantized again alike, as
// mlx-lm does (the parts' groups run along other axes than kv_b's).
std::pair<MultiLinear, MultiLinear> split_kv_b(Weights& w, const std::string& prefix,
                                               const ModelConfig& c) {
  const auto& d = c.mla;
  auto weight = w.take(prefix + ".weight");
  std::optional<QuantParams> quant;
  if (auto scales = w.take_optional(prefix + ".scales")) {
    quant = quant_params(w, prefix, weight, *scales);
    weight = mx::dequantize(weight, *scales, w.take_optional(prefix + ".biases"), quant->group_size,
                            quant->bits, quant->mode);
  }
  const int per_head = d.qk_nope_head_dim + d.v_head_dim;
  if (weight.ndim() != 2 || weight.shape(0) != c.num_heads * per_head ||
      weight.shape(1) != d.kv_lora_rank) {
    throw Error(w.source() + ": '" + prefix + ".weight' must be [" +
                std::to_string(c.num_heads * per_head) + ", " + std::to_string(d.kv_lora_rank) +
                "]");
  }
  weight = mx::reshape(weight, {c.num_heads, per_head, d.kv_lora_rank});
  auto key = mx::contiguous(mx::swapaxes(
      mx::slice(weight, {0, 0, 0}, {c.num_heads, d.qk_nope_head_dim, d.kv_lora_rank}), 1, 2));
  auto value = mx::contiguous(
      mx::slice(weight, {0, d.qk_nope_head_dim, 0}, {c.num_heads, per_head, d.kv_lora_rank}));
  if (quant) {
    return {MultiLinear::quantized(key, *quant, w.dtype()),
            MultiLinear::quantized(value, *quant, w.dtype())};
  }
  key = mx::astype(key, w.dtype());
  value = mx::astype(value, w.dtype());
  mx::eval({key, value});
  return {MultiLinear::from(key), MultiLinear::from(value)};
}

}  // namespace

LatentAttention LatentAttention::load(Weights& w, const std::string& prefix, const ModelConfig& c) {
  LatentAttention a;
  a.dims_ = c.mla;
  a.heads_ = c.num_heads;
  const auto& d = a.dims_;
  const std::string latent = prefix + ".kv_a_proj_with_mqa";
  if (d.q_lora_rank > 0) {
    a.input_ = LinearGroup::load(w, {prefix + ".q_a_proj", latent});
    a.q_norm_ = RMSNorm::load(w, prefix + ".q_a_layernorm.weight", c.rms_norm_eps);
    a.q_b_ = Linear::load(w, prefix + ".q_b_proj");
  } else {
    a.input_ = LinearGroup::load(w, {prefix + ".q_proj", latent});
  }
  a.latent_norm_ = RMSNorm::load(w, prefix + ".kv_a_layernorm.weight", c.rms_norm_eps);
  if (w.has(prefix + ".embed_q.weight")) {
    a.embed_q_ = MultiLinear::load(w, prefix + ".embed_q");
    a.unembed_out_ = MultiLinear::load(w, prefix + ".unembed_out");
  } else {
    std::tie(a.embed_q_, a.unembed_out_) = split_kv_b(w, prefix + ".kv_b_proj", c);
  }
  a.o_ = Linear::load(w, prefix + ".o_proj");
  ModelConfig rotary = c;  // RoPE turns only the rotary part of each head
  rotary.head_dim = d.qk_rope_head_dim;
  a.rope_ = std::make_shared<const Rope>(rotary);
  a.scale_ = 1.0f / std::sqrt(static_cast<float>(d.qk_nope_head_dim + d.qk_rope_head_dim));
  return a;
}

mx::array LatentAttention::operator()(const mx::array& x, const Batch& batch,
                                      cache::Cache& cache) const {
  const int B = x.shape(0);
  const int L = x.shape(1);
  const auto& d = dims_;
  const auto in = input_(x);
  auto q = q_b_ ? (*q_b_)((*q_norm_)(in[0])) : in[0];
  const int q_dim = d.qk_nope_head_dim + d.qk_rope_head_dim;
  q = mx::transpose(mx::reshape(q, {B, L, heads_, q_dim}), {0, 2, 1, 3});
  const auto q_parts = mx::split(q, mx::Shape{d.qk_nope_head_dim}, -1);
  const auto kv_parts = mx::split(in[1], mx::Shape{d.kv_lora_rank}, -1);
  // [B, L, x] -> [B, 1, L, x]: the cache's one "head".
  const auto latent = mx::expand_dims(latent_norm_(kv_parts[0]), 1);
  // Scores are q_nope . (W_k latent) + q_rope . k_rope = [W_k^T q_nope | q_rope] . [latent |
  // k_rope].
  const auto inputs = {embed_q_(q_parts[0]), q_parts[1], latent, mx::expand_dims(kv_parts[1], 1)};
  auto out =
      by_row(inputs, 2, batch, cache, [&](const auto& cut, cache::Cache& c, const auto& offset) {
        const auto history = c.update(cut[2], (*rope_)(cut[3], offset));
        const auto queries = mx::concatenate({cut[0], (*rope_)(cut[1], offset)}, 3);
        return kernels::scaled_dot_product_attention(queries, history.keys, history.values, scale_,
                                                     queries.shape(2) > 1);
      });
  out = unembed_out_(out);  // [B, heads, L, rank] -> [B, heads, L, v]
  out = mx::reshape(mx::transpose(out, {0, 2, 1, 3}), {B, L, heads_ * d.v_head_dim});
  return o_(out);
}

}  // namespace heron::model
