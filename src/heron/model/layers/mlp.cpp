#include "heron/model/layers/mlp.h"

#include <mlx/compile.h>
#include <mlx/ops.h>

namespace heron::model {

namespace mx = mlx::core;

namespace {

// silu(g) * u as one fused elementwise kernel.
std::vector<mx::array> swiglu_impl(const std::vector<mx::array>& in) {
  const auto& g = in[0];
  return {mx::multiply(mx::multiply(g, mx::sigmoid(g)), in[1])};
}

const auto swiglu = mx::compile(swiglu_impl, /*shapeless=*/true);

}  // namespace

GatedMLP GatedMLP::load(Weights& w, const std::string& prefix) {
  GatedMLP m;
  m.gate_up_ = LinearGroup::load(w, {prefix + ".gate_proj", prefix + ".up_proj"});
  m.down_ = Linear::load(w, prefix + ".down_proj");
  return m;
}

mx::array GatedMLP::operator()(const mx::array& x) const {
  auto gate_up = gate_up_(x);
  return down_(swiglu({gate_up[0], gate_up[1]})[0]);
}

}  // namespace heron::model
