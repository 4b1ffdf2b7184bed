#include "heron/kernels/rms_norm.h"

#include <cmath>
#include <memory>
#include <stdexcept>
#include <typeinfo>

#include <mlx/fast.h>
#include <mlx/primitives.h>

#include "heron/kernels/cpu_task.h"
#include "heron/kernels/rows.h"

namespace heron::kernels {

namespace mx = mlx::core;

namespace {

void normalize_rows(const mx::array& x, const mx::array& w, mx::array& out, float eps) {
  const int64_t D = x.shape(-1);
  if (D == 0) return;
  const int64_t rows = x.size() / D;
  const int64_t step = x.strides().back();
  const float* wp = w.data<float>();
  const int64_t wstep = w.strides().back();
  float* dst = out.data<float>();
  for (int64_t r = 0; r < rows; ++r, dst += D) {
    const float* src = x.data<float>() + row_offset(x, r);
    float squares = 0.0f;
    for (int64_t j = 0; j < D; ++j) squares += src[j * step] * src[j * step];
    const float inv = 1.0f / std::sqrt(squares / static_cast<float>(D) + eps);
    for (int64_t j = 0; j < D; ++j) dst[j] = src[j * step] * inv * wp[j * wstep];
  }
}

class RmsNormCpu : public mx::UnaryPrimitive {
 public:
  RmsNormCpu(mx::Stream stream, float eps) : UnaryPrimitive(stream), eps_(eps) {}

  void eval_cpu(const std::vector<mx::array>& inputs, mx::array& out) override {
    run_on_cpu_stream(stream(), inputs, out, [eps = eps_](auto& in, mx::array& result) {
      normalize_rows(in[0], in[1], result, eps);
    });
  }
  void eval_gpu(const std::vector<mx::array>&, mx::array&) override {
    throw std::runtime_error("HeronRmsNorm is CPU-only (GPU streams use MLX's)");
  }
  const char* name() const override { return "HeronRmsNorm"; }
  bool is_equivalent(const mx::Primitive& other) const override {
    return typeid(other) == typeid(*this) && static_cast<const RmsNormCpu&>(other).eps_ == eps_;
  }
  std::vector<mx::Shape> output_shapes(const std::vector<mx::array>& inputs) override {
    return {inputs[0].shape()};
  }

 private:
  float eps_;
};

}  // namespace

mx::array rms_norm(const mx::array& x, const mx::array& weight, float eps, mx::StreamOrDevice s) {
  const auto stream = mx::to_stream(s);
  const bool fast = stream.device == mx::Device::cpu && x.dtype() == mx::float32 &&
                    weight.dtype() == mx::float32 && x.ndim() >= 1 && weight.ndim() == 1 &&
                    weight.shape(0) == x.shape(-1);
  if (!fast) return mx::fast::rms_norm(x, weight, eps, s);
  return mx::array(x.shape(), mx::float32, std::make_shared<RmsNormCpu>(stream, eps), {x, weight});
}

}  // namespace heron::kernels
