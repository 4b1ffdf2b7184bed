#include "heron/model/layers/norm.h"

#include <mlx/fast.h>
#include <mlx/ops.h>

#include "heron/kernels/rms_norm.h"

namespace heron::model {

namespace mx = mlx::core;

RMSNorm RMSNorm::load(Weights& w, const std::string& name, float eps, bool offset) {
  RMSNorm n;
  auto weight = w.take(name);
  // Add in float32, as the references do, before casting to the compute type.
  if (offset) weight = mx::add(mx::astype(weight, mx::float32), mx::array(1.0f));
  n.weight_ = mx::astype(weight, w.dtype());
  n.eps_ = eps;
  return n;
}

mx::array RMSNorm::operator()(const mx::array& x) const {
  return kernels::rms_norm(x, weight_, eps_);
}

LayerNorm LayerNorm::load(Weights& w, const std::string& prefix, float eps) {
  LayerNorm n;
  n.weight_ = mx::astype(w.take(prefix + ".weight"), w.dtype());
  n.bias_ = mx::astype(w.take(prefix + ".bias"), w.dtype());
  n.eps_ = eps;
  return n;
}

mx::array LayerNorm::operator()(const mx::array& x) const {
  return mx::fast::layer_norm(x, weight_, bias_, eps_);
}

}  // namespace heron::model
