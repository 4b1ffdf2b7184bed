#include "heron/model/layers/attention.h"

#include <algorithm>
#include <cmath>

#include <mlx/ops.h>

#include "heron/cache/band_mask.h"
#include "heron/core/error.h"
#include "heron/kernels/attention.h"
#include "heron/model/layers/by_row.h"

namespace heron::model {

namespace mx = mlx::core;

namespace {

// Causal attention where query i (position T - L + i of T keys) sees keys in
// (T - L + i - window, T - L + i]. Keys no query can see are sliced off first, so
// decode reads at most `window` of them.
mx::array windowed_attention(const mx::array& q, mx::array k, mx::array v, float scale, int window,
                             const std::optional<mx::array>& sinks) {
  const int L = q.shape(2);
  const int first = std::max(0, k.shape(2) - L - window + 1);
  if (first > 0) {
    k = mx::slice(k, {0, 0, first, 0}, k.shape());
    v = mx::slice(v, {0, 0, first, 0}, v.shape());
  }
  const int T = k.shape(2);
  // The last query sees back to key 0: plain causal attention.
  if (T <= window) return kernels::scaled_dot_product_attention(q, k, v, scale, L > 1, sinks);
  return kernels::masked_scaled_dot_product_attention(
      q, k, v, scale, cache::band_mask(T - L, L, 0, T, window), sinks);
}

}  // namespace

mx::array attend(const mx::array& q, const cache::KVHistory& history, float scale, int window,
                 const std::optional<mx::array>& sinks) {
  // A cache that stores keys out of position order (a sliding window's ring) masks them;
  // a full cache holds them in order, and a window is cut from it here.
  if (history.mask) {
    return kernels::masked_scaled_dot_product_attention(q, history.keys, history.values, scale,
                                                        *history.mask, sinks);
  }
  if (window > 0) return windowed_attention(q, history.keys, history.values, scale, window, sinks);
  return kernels::scaled_dot_product_attention(q, history.keys, history.values, scale,
                                               q.shape(2) > 1, sinks);
}

Attention Attention::load(Weights& w, const std::string& prefix, const ModelConfig& c,
                          std::shared_ptr<const Rope> rope, bool qk_norm, int window) {
  Attention a;
  a.qkv_ = LinearGroup::load(w, {prefix + ".q_proj", prefix + ".k_proj", prefix + ".v_proj"});
  a.o_ = Linear::load(w, prefix + ".o_proj");
  if (qk_norm) {
    a.q_norm_ = RMSNorm::load(w, prefix + ".q_norm.weight", c.rms_norm_eps, c.norm_weight_offset);
    a.k_norm_ = RMSNorm::load(w, prefix + ".k_norm.weight", c.rms_norm_eps, c.norm_weight_offset);
  }
  if (auto sinks = w.take_optional(prefix + ".sinks")) {
    if (sinks->ndim() != 1 || sinks->shape(0) != c.num_heads) {
      throw Error(w.source() + ": '" + prefix + ".sinks' must hold one value per attention head");
    }
    a.sinks_ = mx::astype(*sinks, w.dtype());
  }
  a.rope_ = std::move(rope);
  a.heads_ = c.num_heads;
  a.kv_heads_ = c.num_kv_heads;
  a.head_dim_ = c.head_dim;
  a.window_ = window;
  a.output_gate_ = c.attention_output_gate;
  const float scalar =
      c.query_pre_attn_scalar > 0 ? c.query_pre_attn_scalar : static_cast<float>(c.head_dim);
  // YaRN scales queries and keys by its attention factor: their products by its square.
  a.scale_ = a.rope_->attention_factor() * a.rope_->attention_factor() / std::sqrt(scalar);
  return a;
}

mx::array Attention::operator()(const mx::array& x, const Batch& batch, cache::Cache& cache) const {
  const int B = x.shape(0);
  const int L = x.shape(1);
  // [B, L, heads*D] -> [B, heads, L, D], normalising per head where the model asks.
  // One position (decode) needs no transpose: a reshape lays it out the same way, and
  // every node less shortens the host's work per step.
  auto heads = [&](const mx::array& t, int n, const std::optional<RMSNorm>& norm) {
    auto r = L == 1 ? mx::reshape(t, {B, n, 1, head_dim_}) : mx::reshape(t, {B, L, n, head_dim_});
    if (norm) r = (*norm)(r);
    return L == 1 ? r : mx::transpose(r, {0, 2, 1, 3});
  };
  auto qkv = qkv_(x);
  std::optional<mx::array> gate;
  if (output_gate_) {
    auto both = mx::reshape(qkv[0], {B, L, heads_, 2 * head_dim_});
    gate = mx::reshape(mx::slice(both, {0, 0, 0, head_dim_}, both.shape()),
                       {B, L, heads_ * head_dim_});
    qkv[0] = mx::slice(both, {0, 0, 0, 0}, {B, L, heads_, head_dim_});
  }
  auto q = heads(qkv[0], heads_, q_norm_);
  auto k = heads(qkv[1], kv_heads_, k_norm_);
  auto v = heads(qkv[2], kv_heads_, std::nullopt);
  auto out =
      by_row({q, k, v}, 2, batch, cache, [&](const auto& cut, cache::Cache& c, const auto& offset) {
        const auto history = c.update((*rope_)(cut[1], offset), cut[2]);
        return attend((*rope_)(cut[0], offset), history, scale_, window_, sinks_);
      });
  if (L > 1) out = mx::transpose(out, {0, 2, 1, 3});
  out = mx::reshape(out, {B, L, heads_ * head_dim_});
  if (gate) out = mx::multiply(out, mx::sigmoid(*gate));
  return o_(out);
}

}  // namespace heron::model
