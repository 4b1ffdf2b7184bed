#include "heron/kernels/rope.h"

#include <cmath>
#include <memory>
#include <stdexcept>
#include <typeinfo>
#include <vector>

#include <mlx/fast.h>
#include <mlx/ops.h>
#include <mlx/primitives.h>
#include <mlx/transforms.h>

#include "heron/kernels/cpu_task.h"
#include "heron/kernels/rows.h"

namespace heron::kernels {

namespace mx = mlx::core;

struct Rotary::Table {
  int dims;
  bool traditional;
  float scale;
  std::vector<float> inv_freqs;
};

namespace {

// Inverse frequencies, base^(-i/half) or 1 / freqs[i].
std::vector<float> inverse_frequencies(int dims, std::optional<float> base,
                                       const std::optional<mx::array>& freqs) {
  const int half = dims / 2;
  std::vector<float> inv(static_cast<size_t>(half));
  if (freqs) {
    auto f = mx::astype(*freqs, mx::float32);
    mx::eval(f);
    for (int i = 0; i < half; ++i) inv[i] = 1.0f / f.data<float>()[i * f.strides(0)];
    return inv;
  }
  // In double, rounded once: MLX's float32 exp can be an ulp off, which a far position
  // multiplies into the angle.
  const double step = std::log(static_cast<double>(*base)) / half;
  for (int i = 0; i < half; ++i) inv[i] = static_cast<float>(std::exp(-i * step));
  return inv;
}

// x viewed as [B, H, L, D]; row (b, h, l) rotates by position offsets[b] + l.
void rotate(const mx::array& x, const mx::array& offsets, mx::array& out, const Rotary::Table& r) {
  const int64_t D = x.shape(-1);
  if (x.size() == 0) return;
  const int64_t L = x.shape(-2);
  const int64_t B = x.shape(0);
  const int64_t per_batch = x.size() / D / B;  // rows of one batch entry: H * L
  const int64_t step = x.strides().back();
  const int half = r.dims / 2;
  std::vector<float> cos_t(static_cast<size_t>(half)), sin_t(static_cast<size_t>(half));
  const int32_t* off = offsets.data<int32_t>();
  float* dst = out.data<float>();
  for (int64_t b = 0; b < B; ++b) {
    const int32_t first = off[offsets.size() == 1 ? 0 : b * offsets.strides(0)];
    for (int64_t l = 0; l < L; ++l) {
      const float position = static_cast<float>(first + l) * r.scale;
      for (int i = 0; i < half; ++i) {
        const float theta = position * r.inv_freqs[i];
        cos_t[i] = std::cos(theta);
        sin_t[i] = std::sin(theta);
      }
      // Every head's row at this position.
      for (int64_t row = b * per_batch + l; row < (b + 1) * per_batch; row += L) {
        const float* src = x.data<float>() + row_offset(x, row);
        float* o = dst + row * D;
        for (int i = 0; i < half; ++i) {
          const int64_t i1 = r.traditional ? 2 * i : i;
          const int64_t i2 = r.traditional ? 2 * i + 1 : i + half;
          const float x1 = src[i1 * step];
          const float x2 = src[i2 * step];
          o[i1] = x1 * cos_t[i] - x2 * sin_t[i];
          o[i2] = x1 * sin_t[i] + x2 * cos_t[i];
        }
        for (int64_t j = r.dims; j < D; ++j) o[j] = src[j * step];
      }
    }
  }
}

class RopeCpu : public mx::UnaryPrimitive {
 public:
  RopeCpu(mx::Stream stream, std::shared_ptr<const Rotary::Table> rotation)
      : UnaryPrimitive(stream), rotation_(std::move(rotation)) {}

  void eval_cpu(const std::vector<mx::array>& inputs, mx::array& out) override {
    run_on_cpu_stream(stream(), inputs, out, [rotation = rotation_](auto& in, mx::array& result) {
      rotate(in[0], in[1], result, *rotation);
    });
  }
  void eval_gpu(const std::vector<mx::array>&, mx::array&) override {
    throw std::runtime_error("HeronRope is CPU-only (GPU streams use MLX's)");
  }
  const char* name() const override { return "HeronRope"; }
  bool is_equivalent(const mx::Primitive& other) const override {
    if (typeid(other) != typeid(*this)) return false;
    const auto& o = *static_cast<const RopeCpu&>(other).rotation_;
    const auto& r = *rotation_;
    return r.dims == o.dims && r.traditional == o.traditional && r.scale == o.scale &&
           r.inv_freqs == o.inv_freqs;
  }
  std::vector<mx::Shape> output_shapes(const std::vector<mx::array>& inputs) override {
    return {inputs[0].shape()};
  }

 private:
  std::shared_ptr<const Rotary::Table> rotation_;
};

}  // namespace

Rotary::Rotary(int dims, bool traditional, std::optional<float> base,
               std::optional<mx::array> freqs, float scale)
    : dims_(dims), traditional_(traditional), base_(base), freqs_(std::move(freqs)), scale_(scale) {
  const bool valid = dims > 0 && dims % 2 == 0 && base_.has_value() != freqs_.has_value() &&
                     (!freqs_ || (freqs_->ndim() == 1 && freqs_->shape(0) == dims / 2));
  if (valid) {
    table_ = std::make_shared<const Table>(
        Table{dims, traditional, scale, inverse_frequencies(dims, base_, freqs_)});
  }
}

mx::array Rotary::operator()(const mx::array& x, const mx::array& offsets,
                             mx::StreamOrDevice s) const {
  const auto stream = mx::to_stream(s);
  const bool fast = table_ && stream.device == mx::Device::cpu && x.dtype() == mx::float32 &&
                    (x.ndim() == 3 || x.ndim() == 4) && offsets.dtype() == mx::int32 &&
                    offsets.ndim() <= 1 &&
                    (offsets.size() == 1 || offsets.size() == static_cast<size_t>(x.shape(0))) &&
                    dims_ <= x.shape(-1);
  if (!fast) return mx::fast::rope(x, dims_, traditional_, base_, scale_, offsets, freqs_, s);
  return mx::array(x.shape(), mx::float32, std::make_shared<RopeCpu>(stream, table_), {x, offsets});
}

}  // namespace heron::kernels
