#include "heron/model/layers/linear.h"

#include <mlx/ops.h>
#include <mlx/transforms.h>

#include "heron/core/error.h"
#include "heron/kernels/quantized_matmul.h"

namespace heron::model {

namespace mx = mlx::core;

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
    return l;
  }
  l.biases_ = w.take(prefix + ".biases");
  // Bits follow from the packed width: in*bits/32 packed columns, in/group scales.
  const int group = w.group_size();
  const int packed = l.weight_.shape(1);
  const int groups = l.scales_->shape(-1);
  const int64_t in = static_cast<int64_t>(groups) * group;
  if (l.weight_.dtype() != mx::uint32 || in == 0 || (int64_t{packed} * 32) % in != 0) {
    throw Error(w.source() + ": '" + prefix + "' has inconsistent quantized shapes");
  }
  l.quant_ = {group, static_cast<int>(int64_t{packed} * 32 / in)};
  l.in_features_ = static_cast<int>(in);
  l.scales_ = mx::astype(*l.scales_, w.dtype());
  l.biases_ = mx::astype(*l.biases_, w.dtype());
  return l;
}

Linear Linear::concat(const std::vector<Linear>& parts) {
  Linear l = parts.at(0);
  auto joined = [&](auto member) {
    std::vector<mx::array> rows;
    for (const auto& p : parts) rows.push_back(*(p.*member));
    return mx::concatenate(rows, 0);
  };
  for (const auto& p : parts) {
    if (p.in_features_ != l.in_features_ || p.quant_.bits != l.quant_.bits ||
        p.quant_.group_size != l.quant_.group_size || p.bias_.has_value() != l.bias_.has_value()) {
      throw Error("cannot fuse linear layers of different kinds");
    }
  }
  std::vector<mx::array> rows;
  for (const auto& p : parts) rows.push_back(p.weight_);
  l.weight_ = mx::concatenate(rows, 0);
  std::vector<mx::array> fused{l.weight_};
  if (l.quant_.bits) {
    l.scales_ = joined(&Linear::scales_);
    l.biases_ = joined(&Linear::biases_);
    fused.insert(fused.end(), {*l.scales_, *l.biases_});
  }
  if (l.bias_) {
    l.bias_ = joined(&Linear::bias_);
    fused.push_back(*l.bias_);
  }
  mx::eval(fused);
  return l;
}

mx::array Linear::operator()(const mx::array& x) const {
  auto y = quant_.bits ? kernels::quantized_matmul(x, weight_, *scales_, *biases_,
                                                   quant_.group_size, quant_.bits)
                       : mx::matmul(x, mx::transpose(weight_));
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
  auto biases = mx::take(*t.biases_, ids, 0);
  return mx::astype(mx::dequantize(rows, scales, biases, t.quant_.group_size, t.quant_.bits),
                    dtype_);
}

}  // namespace heron::model
