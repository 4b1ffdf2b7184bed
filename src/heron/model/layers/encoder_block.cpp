#include "heron/model/layers/encoder_block.h"

#include <cmath>

#include <mlx/ops.h>

#include "heron/kernels/attention.h"
#include "heron/kernels/gelu.h"

namespace heron::model {

namespace mx = mlx::core;

namespace {

// [B, L, heads * d] -> [B, heads, L, d]
mx::array split_heads(const mx::array& x, int heads) {
  const int B = x.shape(0), L = x.shape(1);
  return mx::transpose(mx::reshape(x, {B, L, heads, x.shape(2) / heads}), {0, 2, 1, 3});
}

}  // namespace

EncoderBlock EncoderBlock::load(Weights& w, const std::string& prefix,
                                const EncoderConfig& config) {
  const std::string a = prefix + ".attention.";
  EncoderBlock b;
  b.qkv_ = LinearGroup::load(w, {a + "self.query", a + "self.key", a + "self.value"});
  b.attention_out_ = Linear::load(w, a + "output.dense");
  b.attention_norm_ = LayerNorm::load(w, a + "output.LayerNorm", config.layer_norm_eps);
  b.intermediate_ = Linear::load(w, prefix + ".intermediate.dense");
  b.output_ = Linear::load(w, prefix + ".output.dense");
  b.output_norm_ = LayerNorm::load(w, prefix + ".output.LayerNorm", config.layer_norm_eps);
  b.heads_ = config.num_heads;
  return b;
}

mx::array EncoderBlock::operator()(const mx::array& x, const mx::array& lengths) const {
  const int B = x.shape(0), L = x.shape(1), hidden = x.shape(2);
  auto qkv = qkv_(x);
  const int head_dim = hidden / heads_;
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  auto attended = kernels::padded_scaled_dot_product_attention(
      split_heads(qkv[0], heads_), split_heads(qkv[1], heads_), split_heads(qkv[2], heads_), scale,
      lengths);
  attended = mx::reshape(mx::transpose(attended, {0, 2, 1, 3}), {B, L, hidden});
  const auto h = attention_norm_(mx::add(attention_out_(attended), x));
  return output_norm_(mx::add(output_(kernels::gelu_erf(intermediate_(h))), h));
}

}  // namespace heron::model
