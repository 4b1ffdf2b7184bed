#include "heron/model/layers/norm.h"

#include <mlx/fast.h>
#include <mlx/ops.h>

#include "heron/kernels/cuda/add_rms_norm.h"

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

std::pair<mx::array, mx::array> RMSNorm::add_and_norm(const mx::array& h,
                                                      const mx::array& delta) const {
  const auto stream = mx::to_stream({});
  if (kernels::cuda::add_rms_norm_supported(h, delta, weight_, stream)) {
    return kernels::cuda::add_rms_norm(h, delta, weight_, eps_, stream);
  }
  auto sum = mx::add(h, delta);
  return {sum, (*this)(sum)};
}

}  // namespace heron::model
