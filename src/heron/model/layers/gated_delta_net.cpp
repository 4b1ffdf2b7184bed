#include "heron/model/layers/gated_delta_net.h"

#include <cmath>

#include <mlx/ops.h>
#include <mlx/transforms.h>

#include "heron/cache/recurrent_cache.h"
#include "heron/core/error.h"
#include "heron/kernels/gated_delta.h"
#include "heron/kernels/rms_norm.h"
#include "heron/model/layers/by_row.h"
#include "heron/model/layers/mlp.h"

namespace heron::model {

namespace mx = mlx::core;

namespace {

// Rows [from, from + n) of each of `blocks` equal blocks, block after block, for every
// (from, n) of `parts`: Qwen3-Next groups its projections' rows by key head ([q k v z] of
// head 0, then of head 1, ...); this gathers each part's rows of every head in turn.
mx::array grouped_rows(int blocks, int block, const std::vector<std::pair<int, int>>& parts) {
  std::vector<int32_t> rows;
  for (const auto& [from, n] : parts) {
    for (int b = 0; b < blocks; ++b) {
      for (int r = 0; r < n; ++r) rows.push_back(b * block + from + r);
    }
  }
  return mx::array(rows.data(), {static_cast<int>(rows.size())}, mx::int32);
}

// Stores Qwen3-Next's fused PREFIX.FUSED, whose rows hold for each key head in turn the
// pieces named in `pieces` (with their widths), as one layer per name: each of its pieces'
// rows of every key head, its pieces side by side (q, k and v make Qwen3.5's in_proj_qkv);
// quantized or not.
void split_grouped(Weights& w, const std::string& prefix, const std::string& fused,
                   const std::vector<std::pair<std::string, int>>& pieces, int groups) {
  int block = 0;
  std::vector<std::pair<std::string, std::vector<std::pair<int, int>>>> layers;
  for (const auto& [name, width] : pieces) {
    if (layers.empty() || layers.back().first != name) layers.push_back({name, {}});
    layers.back().second.emplace_back(block, width);
    block += width;
  }
  for (const char* field : {".weight", ".scales", ".biases"}) {
    auto t = w.take_optional(prefix + "." + fused + field);
    if (!t) continue;
    if (t->ndim() != 2 || t->shape(0) != groups * block) {
      throw Error(w.source() + ": '" + prefix + "." + fused + field + "' must have " +
                  std::to_string(groups * block) + " rows");
    }
    for (const auto& [name, parts] : layers) {
      w.put(prefix + "." + name + field, mx::take(*t, grouped_rows(groups, block, parts), 0));
    }
  }
}

}  // namespace

GatedDeltaNet GatedDeltaNet::load(Weights& w, const std::string& prefix, const ModelConfig& c) {
  const auto& d = c.linear;
  const int per_key = d.value_heads / d.key_heads;
  if (w.has(prefix + ".in_proj_qkvz.weight")) {
    const int values = per_key * d.value_head_dim;
    split_grouped(w, prefix, "in_proj_qkvz",
                  {{"in_proj_qkv", d.key_head_dim},
                   {"in_proj_qkv", d.key_head_dim},
                   {"in_proj_qkv", values},
                   {"in_proj_z", values}},
                  d.key_heads);
    split_grouped(w, prefix, "in_proj_ba", {{"in_proj_b", per_key}, {"in_proj_a", per_key}},
                  d.key_heads);
  }
  GatedDeltaNet n;
  std::vector<std::string> in;
  for (const char* part : {".in_proj_qkv", ".in_proj_z", ".in_proj_b", ".in_proj_a"}) {
    in.push_back(prefix + part);
  }
  n.in_ = LinearGroup::load(w, in);
  n.out_ = Linear::load(w, prefix + ".out_proj");
  const int channels = d.conv_channels();
  auto conv = w.take(prefix + ".conv1d.weight");
  if (conv.size() != static_cast<size_t>(channels) * d.conv_kernel || conv.shape(0) != channels) {
    throw Error(w.source() + ": '" + prefix + ".conv1d.weight' must be [" +
                std::to_string(channels) + ", " + std::to_string(d.conv_kernel) + "]");
  }
  conv = mx::astype(mx::reshape(conv, {channels, d.conv_kernel}), w.dtype());
  auto vector = [&](const std::string& name, int size) {
    auto t = w.take(prefix + "." + name);
    if (t.ndim() != 1 || t.shape(0) != size) {
      throw Error(w.source() + ": '" + prefix + "." + name + "' must hold " + std::to_string(size) +
                  " values");
    }
    return t;
  };
  n.decay_ = mx::negative(mx::exp(mx::astype(vector("A_log", d.value_heads), mx::float32)));
  n.dt_bias_ = mx::astype(vector("dt_bias", d.value_heads), w.dtype());
  n.norm_ = mx::astype(vector("norm.weight", d.value_head_dim), w.dtype());
  n.dims_ = d;
  n.eps_ = c.rms_norm_eps;
  // Unit-length queries and keys (mlx-lm's normalize_qk: eps 1e-6 on the sum of squares,
  // so 1e-6 / key_head_dim on the mean), the readout scale 1/sqrt(key_head_dim) folded
  // into the queries: RMS norms with constant weights.
  const float inv_scale = 1.0f / std::sqrt(static_cast<float>(d.key_head_dim));
  n.qk_eps_ = 1e-6f * inv_scale * inv_scale;
  n.q_scale_ = mx::full({d.key_head_dim}, inv_scale * inv_scale, w.dtype());
  n.k_scale_ = mx::full({d.key_head_dim}, inv_scale, w.dtype());
  std::vector<mx::array> made{n.decay_, n.dt_bias_, n.norm_, n.q_scale_, n.k_scale_};
  for (int j = 0; j < d.conv_kernel; ++j) {
    n.taps_.push_back(
        mx::contiguous(mx::reshape(mx::slice(conv, {0, j}, {channels, j + 1}), {channels})));
    made.push_back(n.taps_.back());
  }
  mx::eval(made);
  return n;
}

mx::array GatedDeltaNet::operator()(const mx::array& x, const Batch& batch,
                                    cache::Cache& cache) const {
  const int B = x.shape(0);
  const int L = x.shape(1);
  const auto parts = in_(x);
  const auto& z = parts[1];
  auto y = by_row({parts[0], parts[2], parts[3]}, 1, batch, cache,
                  [&](const auto& cut, cache::Cache& c, const auto& /*offset*/) {
                    return recur(cut[0], cut[1], cut[2], c);
                  });
  // RMS-normed per head, gated by SiLU(z).
  y = kernels::rms_norm(y, norm_, eps_);
  y = swiglu(mx::reshape(z, y.shape()), y);
  return out_(mx::reshape(y, {B, L, dims_.value_heads * dims_.value_head_dim}));
}

mx::array GatedDeltaNet::recur(const mx::array& qkv, const mx::array& b, const mx::array& a,
                               cache::Cache& cache) const {
  auto* recurrent = dynamic_cast<cache::RecurrentCache*>(&cache);
  if (recurrent == nullptr) throw Error("a linear-attention layer needs a recurrent cache");
  const int B = qkv.shape(0);
  const int L = qkv.shape(1);
  const int K = dims_.conv_kernel;
  const int channels = dims_.conv_channels();
  const int key_dim = dims_.key_heads * dims_.key_head_dim;
  const auto dtype = qkv.dtype();

  const auto before = recurrent->state();
  // The causal convolution over the last K - 1 inputs before this write and its own.
  const auto history =
      before ? mx::astype(before->conv, dtype) : mx::zeros({B, K - 1, channels}, dtype);
  const auto conv_in = mx::concatenate({history, qkv}, 1);  // [B, K - 1 + L, channels]
  auto conv = mx::multiply(mx::slice(conv_in, {0, 0, 0}, {B, L, channels}), taps_[0]);
  for (int j = 1; j < K; ++j) {
    conv =
        mx::add(conv, mx::multiply(mx::slice(conv_in, {0, j, 0}, {B, j + L, channels}), taps_[j]));
  }
  conv = mx::multiply(conv, mx::sigmoid(conv));
  auto q = mx::reshape(mx::slice(conv, {0, 0, 0}, {B, L, key_dim}),
                       {B, L, dims_.key_heads, dims_.key_head_dim});
  auto k = mx::reshape(mx::slice(conv, {0, 0, key_dim}, {B, L, 2 * key_dim}),
                       {B, L, dims_.key_heads, dims_.key_head_dim});
  auto v = mx::reshape(mx::slice(conv, {0, 0, 2 * key_dim}, {B, L, channels}),
                       {B, L, dims_.value_heads, dims_.value_head_dim});
  q = kernels::rms_norm(q, q_scale_, qk_eps_);
  k = kernels::rms_norm(k, k_scale_, qk_eps_);
  // Per value head: the decay g = exp(-exp(A_log) softplus(a + dt_bias)) and the write
  // strength beta = sigmoid(b).
  const auto softplus = mx::logaddexp(mx::add(a, dt_bias_), mx::array(0.0f, dtype));
  const auto g = mx::exp(mx::multiply(decay_, mx::astype(softplus, mx::float32)));
  const auto beta = mx::astype(mx::sigmoid(b), mx::float32);
  const auto delta_before =
      before ? before->delta
             : mx::zeros({B, dims_.value_heads, dims_.value_head_dim, dims_.key_head_dim},
                         mx::float32);
  const auto keeps = recurrent->keeps(L);
  auto out = kernels::gated_delta(q, k, v, g, beta, delta_before, keeps);
  std::vector<cache::RecurrentCache::State> states;
  for (size_t i = 0; i < keeps.size(); ++i) {
    const int t = keeps[i];
    states.push_back(
        {mx::astype(mx::slice(conv_in, {0, t, 0}, {B, t + K - 1, channels}), mx::float32),
         out[i + 1]});
  }
  recurrent->advance(L, std::move(states));
  return out[0];
}

}  // namespace heron::model
