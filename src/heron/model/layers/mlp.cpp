#include "heron/model/layers/mlp.h"

#include <mlx/compile.h>
#include <mlx/ops.h>

#include "heron/kernels/swiglu.h"

namespace heron::model {

namespace mx = mlx::core;

namespace {

// gpt-oss's gating: g clamped above and u on both sides at in[2] (a scalar), then
// g * sigmoid(1.702 g) * (u + 1).
std::vector<mx::array> clamped_swiglu_impl(const std::vector<mx::array>& in) {
  const auto& limit = in[2];
  const auto g = mx::minimum(in[0], limit);
  const auto u = mx::clip(in[1], mx::negative(limit), limit);
  const auto glu = mx::multiply(g, mx::sigmoid(mx::multiply(mx::array(1.702f, g.dtype()), g)));
  return {mx::multiply(glu, mx::add(u, mx::array(1.0f, u.dtype())))};
}

const auto compiled_clamped_swiglu = mx::compile(clamped_swiglu_impl, /*shapeless=*/true);

// gelu_tanh(g) * u: 0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3))) * u.
std::vector<mx::array> geglu_impl(const std::vector<mx::array>& in) {
  const auto& g = in[0];
  const auto inner = mx::multiply(
      mx::array(0.7978845608028654f, g.dtype()),
      mx::add(g, mx::multiply(mx::array(0.044715f, g.dtype()), mx::multiply(g, mx::square(g)))));
  const auto gelu = mx::multiply(mx::multiply(mx::array(0.5f, g.dtype()), g),
                                 mx::add(mx::array(1.0f, g.dtype()), mx::tanh(inner)));
  return {mx::multiply(gelu, in[1])};
}

const auto geglu = mx::compile(geglu_impl, /*shapeless=*/true);

}  // namespace

mx::array swiglu(const mx::array& gate, const mx::array& up) {
  return kernels::swiglu(gate, up);
}

mx::array clamped_swiglu(const mx::array& gate, const mx::array& up, float limit) {
  return compiled_clamped_swiglu({gate, up, mx::array(limit, gate.dtype())})[0];
}

GatedMLP GatedMLP::load(Weights& w, const std::string& prefix, Activation activation) {
  GatedMLP m;
  m.activation_ = activation;
  m.gate_up_ = LinearGroup::load(w, {prefix + ".gate_proj", prefix + ".up_proj"});
  m.down_ = Linear::load(w, prefix + ".down_proj");
  return m;
}

mx::array GatedMLP::operator()(const mx::array& x) const {
  auto gate_up = gate_up_(x);
  if (activation_ == Activation::Silu) return down_(swiglu(gate_up[0], gate_up[1]));
  return down_(geglu({gate_up[0], gate_up[1]})[0]);
}

}  // namespace heron::model
