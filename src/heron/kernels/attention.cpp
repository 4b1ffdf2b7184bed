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
  if (q.ndim() != 4 || k.ndim() != 4 || v.ndim() != 4) return false;
  const int D = q.shape(3);
  const int Dv = v.shape(3);
  return q.shape(0) > 0 && q.shape(0) == k.shape(0) && k.shape(1) > 0 &&
         q.shape(1) % k.shape(1) == 0 && q.shape(2) > 0 && k.shape(2) > 0 && D > 0 && D % 8 == 0 &&
         k.shape(3) == D && Dv > 0 && Dv % 8 == 0 && v.shape(0) == k.shape(0) &&
         v.shape(1) == k.shape(1) && v.shape(2) == k.shape(2) &&
         (!causal || q.shape(2) <= k.shape(2));
}

// One float32 sink per query head, or none.
bool sinks_fit(const std::optional<mx::array>& sinks, const mx::array& q) {
  return !sinks || (sinks->dtype() == mx::float32 && sinks->ndim() == 1 && q.ndim() == 4 &&
                    sinks->shape(0) == q.shape(1));
}

// The primitive's inputs: q, k, v, the mask or lengths if any, the sinks if any.
mx::array run_primitive(const mx::Stream& s, float scale, bool causal, bool key_lengths,
                        std::vector<mx::array> inputs, const std::optional<mx::array>& sinks) {
  if (sinks) inputs.push_back(*sinks);
  auto shape = inputs[0].shape();
  shape.back() = inputs[2].shape(3);
  return mx::array(shape, mx::float32,
                   std::make_shared<ScaledDotProductAttentionCpu>(s, scale, causal, key_lengths,
                                                                  sinks.has_value()),
                   std::move(inputs));
}

}  // namespace

mx::array scaled_dot_product_attention(const mx::array& q, const mx::array& k, const mx::array& v,
                                       float scale, bool causal,
                                       const std::optional<mx::array>& sinks,
                                       mx::StreamOrDevice s) {
  const auto stream = mx::to_stream(s);
  if (!fast_path(q, k, v, causal, stream) || !sinks_fit(sinks, q)) {
    return mx::fast::scaled_dot_product_attention(q, k, v, scale, causal ? "causal" : "", {}, sinks,
                                                  false, s);
  }
  return run_primitive(stream, scale, causal, false, {q, k, v}, sinks);
}

mx::array masked_scaled_dot_product_attention(const mx::array& q, const mx::array& k,
                                              const mx::array& v, float scale,
                                              const mx::array& mask,
                                              const std::optional<mx::array>& sinks,
                                              mx::StreamOrDevice s) {
  const auto stream = mx::to_stream(s);
  const bool mask_fits = mask.dtype() == mx::bool_ && mask.ndim() == 2 && q.ndim() == 4 &&
                         k.ndim() == 4 && mask.shape(0) == q.shape(2) &&
                         mask.shape(1) == k.shape(2);
  if (!mask_fits || !fast_path(q, k, v, false, stream) || !sinks_fit(sinks, q)) {
    return mx::fast::scaled_dot_product_attention(q, k, v, scale, "", mask, sinks, false, s);
  }
  return run_primitive(stream, scale, false, false, {q, k, v, mask}, sinks);
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
  return run_primitive(stream, scale, false, true, {q, k, v, key_lengths}, std::nullopt);
}

}  // namespace heron::kernels
