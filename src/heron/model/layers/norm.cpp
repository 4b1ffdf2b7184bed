#include "heron/model/layers/norm.h"

#include <mlx/fast.h>
#include <mlx/ops.h>

namespace heron::model {

namespace mx = mlx::core;

RMSNorm RMSNorm::load(Weights& w, const std::string& name, float eps) {
  RMSNorm n;
  n.weight_ = mx::astype(w.take(name), w.dtype());
  n.eps_ = eps;
  return n;
}

mx::array RMSNorm::operator()(const mx::array& x) const {
  return mx::fast::rms_norm(x, weight_, eps_);
}

}  // namespace heron::model
