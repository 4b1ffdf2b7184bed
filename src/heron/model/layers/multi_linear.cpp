#include "heron/model/layers/multi_linear.h"

#include <mlx/ops.h>

#include "heron/core/error.h"

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

mx::array MultiLinear::operator()(const mx::array& x) const {
  if (weight_t_) return mx::matmul(x, *weight_t_);
  return mx::quantized_matmul(x, weight_, *scales_, biases_, true, quant_.group_size, quant_.bits,
                              quant_.mode);
}

}  // namespace heron::model
