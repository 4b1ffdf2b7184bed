#include "heron/kernels/attention.h"

#include <memory>

#include <mlx/fast.h>
#include <mlx/ops.h>

#include "heron/kernels/sdpa_primitive.h"

namespace heron::kernels {

namespace mx = mlx::core;

namespace {

// Everything sdpa_cpu handles; anything else is MLX's business (including
// reporting bad shapes). Causal with more queries than keys leaves MLX rows
// with no visible key (it averages all values there): also MLX's.
bool fast_path(const mx::array& q, const mx::array& k, const mx::array& v, bool causal,
               const mx::Stream& s) {
  if (s.device != mx::Device::cpu) return false;
  if (q.dtype() != mx::float32 || k.dtype() != mx::float32 || v.dtype() != mx::float32) {
    return false;
  }
  if (q.ndim() != 4 || k.ndim() != 4 || v.ndim() != 4 || k.shape() != v.shape()) return false;
  const int D = q.shape(3);
  return q.shape(0) > 0 && q.shape(0) == k.shape(0) && k.shape(1) > 0 &&
         q.shape(1) % k.shape(1) == 0 && q.shape(2) > 0 && k.shape(2) > 0 && D > 0 && D % 8 == 0 &&
         k.shape(3) == D && (!causal || q.shape(2) <= k.shape(2));
}

std::shared_ptr<mx::Primitive> primitive(const mx::Stream& s, float scale, bool causal) {
  return std::make_shared<ScaledDotProductAttentionCpu>(s, scale, causal);
}

}  // namespace

mx::array scaled_dot_product_attention(const mx::array& q, const mx::array& k, const mx::array& v,
                                       float scale, bool causal, mx::StreamOrDevice s) {
  const auto stream = mx::to_stream(s);
  if (!fast_path(q, k, v, causal, stream)) {
    return mx::fast::scaled_dot_product_attention(q, k, v, scale, causal ? "causal" : "", {}, {},
                                                  false, s);
  }
  return mx::array(q.shape(), mx::float32, primitive(stream, scale, causal), {q, k, v});
}

mx::array masked_scaled_dot_product_attention(const mx::array& q, const mx::array& k,
                                              const mx::array& v, float scale,
                                              const mx::array& mask, mx::StreamOrDevice s) {
  const auto stream = mx::to_stream(s);
  const bool mask_fits = mask.dtype() == mx::bool_ && mask.ndim() == 2 && q.ndim() == 4 &&
                         k.ndim() == 4 && mask.shape(0) == q.shape(2) &&
                         mask.shape(1) == k.shape(2);
  if (!mask_fits || !fast_path(q, k, v, false, stream)) {
    return mx::fast::scaled_dot_product_attention(q, k, v, scale, "", mask, {}, false, s);
  }
  return mx::array(q.shape(), mx::float32, primitive(stream, scale, false), {q, k, v, mask});
}

mx::array padded_scaled_dot_product_attention(const mx::array& q, const mx::array& k,
                                              const mx::array& v, float scale,
                                              const mx::array& key_lengths, mx::StreamOrDevice s) {
  const auto stream = mx::to_stream(s);
  const bool lengths_fit = key_lengths.dtype() == mx::int32 && key_lengths.ndim() == 1 &&
                           q.ndim() == 4 && key_lengths.shape(0) == q.shape(0);
  if (!lengths_fit || !fast_path(q, k, v, false, stream)) {
    const auto positions = mx::reshape(mx::arange(k.shape(2), mx::int32, s), {1, 1, 1, -1}, s);
    const auto real = mx::less(positions, mx::reshape(key_lengths, {-1, 1, 1, 1}, s), s);
    return mx::fast::scaled_dot_product_attention(q, k, v, scale, "", real, {}, false, s);
  }
  return mx::array(q.shape(), mx::float32,
                   std::make_shared<ScaledDotProductAttentionCpu>(stream, scale, false, true),
                   {q, k, v, key_lengths});
}

}  // namespace heron::kernels
