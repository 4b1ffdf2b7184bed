#include "heron/model/layers/linear.h"

#include <mlx/ops.h>
#include <mlx/transforms.h>

#include "heron/core/error.h"
#include "heron/kernels/float_matmul.h"
#include "heron/kernels/quantized_matmul.h"

namespace heron::model {

namespace mx = mlx::core;

QuantParams quant_params(const Weights& w, const std::string& prefix, const mx::array& weight,
                         const mx::array& scales) {
  const auto scheme = w.quant_scheme(prefix);
  // Bits follow from the packed width: in*bits/32 packed columns, in/group scales.
  const int group = scheme.group_size;
  const int packed = weight.shape(-1);
  const int groups = scales.shape(-1);
  const int64_t in = static_cast<int64_t>(groups) * group;
  if (weight.dtype() != mx::uint32 || in == 0 || (int64_t{packed} * 32) % in != 0 ||
      scales.ndim() != weight.ndim()) {
    throw Error(w.source() + ": '" + prefix + "' has inconsistent quantized shapes");
  }
  return {group, static_cast<int>(int64_t{packed} * 32 / in), scheme.mode};
}

Linear Linear::load(Weights& w, const std::string& prefix) {
  Linear l;
  l.weight_ = w.take(prefix + ".weight");
  l.scales_ = w.take_optional(prefix + ".scales");
  l.bias_ = w.take_optional(prefix + ".bias");
  if (l.bias_) l.bias_ = mx::astype(*l.bias_, w.dtype());
  if (l.weight_.ndim() != 2) throw Error(w.source() + ": '" + prefix + ".weight' is not 2-D");
  if (!l.scales_) {
    l.weight_ = mx::astype(l.weight_, w.dtype());
    l.in_features_ = l.weight_.shape(1);
    l.make_transposed_view();
    return l;
  }
  l.quant_ = quant_params(w, prefix, l.weight_, *l.scales_);
  // Only affine quantization has biases (the mx/nv float modes scale by powers of two).
  if (l.quant_.mode == "affine") l.biases_ = w.take(prefix + ".biases");
  l.in_features_ = l.scales_->shape(-1) * l.quant_.group_size;
  if (l.quant_.mode == "affine") {
    l.scales_ = mx::astype(*l.scales_, w.dtype());
    l.biases_ = mx::astype(*l.biases_, w.dtype());
  }
  return l;
}

Linear Linear::rows(const mx::array& indices) const {
  Linear l = *this;
  auto take = [&](std::optional<mx::array>& a) {
    if (a) a = mx::take(*a, indices, 0);
  };
  l.weight_ = mx::take(weight_, indices, 0);
  take(l.scales_);
  take(l.biases_);
  take(l.bias_);
  std::vector<mx::array> made{l.weight_};
  for (const auto* a : {&l.scales_, &l.biases_, &l.bias_}) {
    if (*a) made.push_back(**a);
  }
  mx::eval(made);
  l.weight_t_.reset();
  if (!quant_.bits) l.make_transposed_view();
  return l;
}

void Linear::make_transposed_view() {
  weight_t_ = mx::transpose(weight_);
}

bool Linear::fusable_with(const Linear& o) const {
  return in_features_ == o.in_features_ && weight_.dtype() == o.weight_.dtype() &&
         quant_ == o.quant_ && biases_.has_value() == o.biases_.has_value() &&
         (!scales_ || scales_->dtype() == o.scales_->dtype()) &&
         bias_.has_value() == o.bias_.has_value();
}

LinearGroup LinearGroup::load(Weights& w, const std::vector<std::string>& prefixes) {
  LinearGroup g;
  for (const auto& p : prefixes) g.layers_.push_back(Linear::load(w, p));
  for (const auto& l : g.layers_) {
    if (!l.fusable_with(g.layers_[0])) return g;
  }
  if (g.layers_.size() < 2) return g;
  auto joined = [&](auto member) {
    std::vector<mx::array> rows;
    for (const auto& l : g.layers_) rows.push_back(*(l.*member));
    return mx::concatenate(rows, 0);
  };
  Linear fused = g.layers_[0];
  std::vector<mx::array> weights;
  int offset = 0;
  for (const auto& l : g.layers_) {
    weights.push_back(l.weight_);
    if (offset) g.splits_.push_back(offset);
    offset += l.out_features();
  }
  fused.weight_ = mx::concatenate(weights, 0);
  std::vector<mx::array> arrays{fused.weight_};
  for (auto member : {&Linear::scales_, &Linear::biases_, &Linear::bias_}) {
    if (!(fused.*member)) continue;
    fused.*member = joined(member);
    arrays.push_back(*(fused.*member));
  }
  mx::eval(arrays);
  fused.make_transposed_view();
  g.layers_ = {std::move(fused)};
  return g;
}

std::vector<mx::array> LinearGroup::operator()(const mx::array& x) const {
  if (fused()) return mx::split(layers_[0](x), splits_, -1);
  std::vector<mx::array> out;
  for (const auto& l : layers_) out.push_back(l(x));
  return out;
}

mx::array Linear::operator()(const mx::array& x) const {
  mx::array y = x;
  if (!quant_.bits) {
    y = kernels::float_matmul_supported(x, weight_, mx::to_stream({}))
            ? kernels::float_matmul(x, weight_)
            : mx::matmul(x, *weight_t_);
  } else if (biases_) {
    y = kernels::quantized_matmul(x, weight_, *scales_, *biases_, quant_.group_size, quant_.bits);
  } else {
    y = mx::quantized_matmul(x, weight_, *scales_, std::nullopt, true, quant_.group_size,
                             quant_.bits, quant_.mode);
  }
  return bias_ ? mx::add(y, *bias_) : y;
}

Embedding Embedding::load(Weights& w, const std::string& prefix) {
  Embedding e;
  e.table_ = Linear::load(w, prefix);
  e.dtype_ = w.dtype();
  return e;
}

mx::array Embedding::operator()(const mx::array& ids) const {
  const auto& t = table_;
  if (!t.quant_.bits) return mx::take(t.weight_, ids, 0);
  // Gather the quantized rows first, then dequantize only those.
  auto rows = mx::take(t.weight_, ids, 0);
  auto scales = mx::take(*t.scales_, ids, 0);
  std::optional<mx::array> biases;
  if (t.biases_) biases = mx::take(*t.biases_, ids, 0);
  return mx::astype(
      mx::dequantize(rows, scales, biases, t.quant_.group_size, t.quant_.bits, t.quant_.mode),
      dtype_);
}

}  // namespace heron::model
