#include "heron/model/layers/multi_linear.h"

#include <mlx/ops.h>
#include <mlx/transforms.h>

#include "heron/core/error.h"
#include "heron/kernels/gather_matmul.h"

namespace heron::model {

namespace mx = mlx::core;

MultiLinear MultiLinear::load(Weights& w, const std::string& prefix) {
  auto weight = w.take(prefix + ".weight");
  if (weight.ndim() != 3) throw Error(w.source() + ": '" + prefix + ".weight' is not 3-D");
  auto scales = w.take_optional(prefix + ".scales");
  if (!scales) return from(mx::astype(weight, w.dtype()));
  MultiLinear m;
  m.weight_ = weight;
  m.quant_ = quant_params(w, prefix, weight, *scales);
  m.scales_ = scales;
  if (m.quant_.mode == "affine") {
    m.scales_ = mx::astype(*scales, w.dtype());
    m.biases_ = mx::astype(w.take(prefix + ".biases"), w.dtype());
  }
  return m;
}

MultiLinear MultiLinear::from(mx::array weight) {
  MultiLinear m;
  m.weight_ = std::move(weight);
  m.weight_t_ = mx::swapaxes(m.weight_, -1, -2);
  return m;
}

MultiLinear MultiLinear::quantized(const mx::array& weight, const QuantParams& quant,
                                   mx::Dtype dtype) {
  if (weight.shape(-1) % quant.group_size != 0) return from(mx::astype(weight, dtype));
  auto parts =
      mx::quantize(mx::astype(weight, mx::float32), quant.group_size, quant.bits, quant.mode);
  MultiLinear m;
  m.weight_ = parts[0];
  m.scales_ = quant.mode == "affine" ? mx::astype(parts[1], dtype) : parts[1];
  if (parts.size() > 2) m.biases_ = mx::astype(parts[2], dtype);
  m.quant_ = quant;
  std::vector<mx::array> made{m.weight_, *m.scales_};
  if (m.biases_) made.push_back(*m.biases_);
  mx::eval(made);
  return m;
}

mx::array MultiLinear::operator()(const mx::array& x) const {
  // On the CPU each head's rows times its matrix through our expert kernel (the heads as
  // experts, each read once): MLX's CPU falls back to reference BLAS and scalar loops here.
  const int B = x.shape(0), heads = x.shape(1), L = x.shape(2);
  const auto rows = mx::expand_dims(x, 3);  // [B, heads, L, 1, in]
  const auto head_of_row =
      mx::broadcast_to(mx::reshape(mx::arange(heads, mx::uint32), {1, heads, 1}), {B, heads, L});
  const auto* scales = scales_ ? &*scales_ : nullptr;
  const auto* biases = biases_ ? &*biases_ : nullptr;
  if (kernels::gather_matmul_supported(rows, weight_, scales, biases, head_of_row,
                                       quant_.group_size, quant_.bits, mx::to_stream({}))) {
    const auto out = kernels::gather_matmul(rows, weight_, scales, biases, head_of_row,
                                            quant_.group_size, quant_.bits);
    return mx::squeeze(out, 3);
  }
  if (weight_t_) return mx::matmul(x, *weight_t_);
  return mx::quantized_matmul(x, weight_, *scales_, biases_, true, quant_.group_size, quant_.bits,
                              quant_.mode);
}

}  // namespace heron::model
