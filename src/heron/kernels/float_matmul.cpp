#include "heron/kernels/float_matmul.h"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <typeinfo>

#include <mlx/primitives.h>

#include "heron/kernels/cpu_task.h"
#include "heron/kernels/gemm_avx2.h"
#include "heron/kernels/qmm_kernels.h"
#include "heron/kernels/thread_pool.h"

namespace heron::kernels {

namespace mx = mlx::core;

namespace {

constexpr int kTileRows = 32;  // weight rows per task

class FloatMatmulCpu : public mx::UnaryPrimitive {
 public:
  explicit FloatMatmulCpu(mx::Stream stream) : UnaryPrimitive(stream) {}

  void eval_cpu(const std::vector<mx::array>& inputs, mx::array& out) override {
    run_on_cpu_stream(stream(), inputs, out, [](auto& in, mx::array& result) {
      std::vector<float> xs, ws;
      const int K = in[0].shape(-1);
      const int M = static_cast<int>(in[0].size() / static_cast<size_t>(K));
      const int N = in[1].shape(0);
      float_matmul_rows(row_major(in[0], xs), M, K, row_major(in[1], ws), N, result.data<float>());
    });
  }
  void eval_gpu(const std::vector<mx::array>&, mx::array&) override {
    throw std::runtime_error("HeronFloatMatmul is CPU-only");
  }
  const char* name() const override { return "HeronFloatMatmul"; }
  bool is_equivalent(const mx::Primitive& other) const override {
    return typeid(other) == typeid(*this);
  }
  std::vector<mx::Shape> output_shapes(const std::vector<mx::array>& inputs) override {
    auto shape = inputs[0].shape();
    shape.back() = inputs[1].shape(0);
    return {shape};
  }
};

}  // namespace

void float_matmul_rows(const float* x, int M, int K, const float* w, int N, float* out) {
  const int tasks = (N + kTileRows - 1) / kTileRows;
  ThreadPool::shared().parallel_for(tasks, [&](int t) {
    const int n0 = t * kTileRows;
    gemm_rows_avx2(x, M, K, w + int64_t{n0} * K, std::min(kTileRows, N - n0), out + n0, N);
  });
}

bool float_matmul_supported(const mx::array& x, const mx::array& w, const mx::Stream& s) {
  return s.device == mx::Device::cpu && avx2_supported() && x.dtype() == mx::float32 &&
         w.dtype() == mx::float32 && x.ndim() >= 1 && w.ndim() == 2 && x.shape(-1) == w.shape(1) &&
         w.shape(1) % 8 == 0 && w.shape(1) > 0;
}

mx::array float_matmul(const mx::array& x, const mx::array& w, mx::StreamOrDevice s) {
  const auto stream = mx::to_stream(s);
  if (!float_matmul_supported(x, w, stream)) {
    throw std::invalid_argument("float_matmul: operands its kernel does not take");
  }
  auto shape = x.shape();
  shape.back() = w.shape(0);
  return mx::array(std::move(shape), mx::float32, std::make_shared<FloatMatmulCpu>(stream), {x, w});
}

}  // namespace heron::kernels
