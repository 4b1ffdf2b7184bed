#include "heron/kernels/gather_matmul.h"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <typeinfo>

#include <mlx/ops.h>
#include <mlx/primitives.h>

#include "heron/kernels/cpu_task.h"
#include "heron/kernels/expert_weights.h"
#include "heron/kernels/float_matmul.h"
#include "heron/kernels/mxfp4_rows.h"
#include "heron/kernels/qmm_kernels.h"
#include "heron/kernels/qmm_operands.h"
#include "heron/kernels/thread_pool.h"

namespace heron::kernels {

namespace mx = mlx::core;

namespace {

class GatherMatmulCpu : public mx::UnaryPrimitive {
 public:
  GatherMatmulCpu(mx::Stream stream, int group_size, int bits)
      : UnaryPrimitive(stream), group_size_(group_size), bits_(bits) {}

  // inputs: x [R, K], indices [R], w, and for quantized weights scales and, when affine,
  // biases (MXFP4 has none).
  void eval_cpu(const std::vector<mx::array>& inputs, mx::array& out) override {
    run_on_cpu_stream(stream(), inputs, out,
                      [group = group_size_, bits = bits_](auto& in, mx::array& result) {
                        run(in, result, group, bits);
                      });
  }
  void eval_gpu(const std::vector<mx::array>&, mx::array&) override {
    throw std::runtime_error("HeronGatherMatmul is CPU-only");
  }
  const char* name() const override { return "HeronGatherMatmul"; }
  bool is_equivalent(const mx::Primitive& other) const override {
    if (typeid(other) != typeid(*this)) return false;
    const auto& o = static_cast<const GatherMatmulCpu&>(other);
    return group_size_ == o.group_size_ && bits_ == o.bits_;
  }
  std::vector<mx::Shape> output_shapes(const std::vector<mx::array>& inputs) override {
    return {{inputs[0].shape(0), inputs[2].shape(1)}};
  }

 private:
  static void run(const std::vector<mx::array>& in, mx::array& out, int group, int bits) {
    std::vector<float> xs, ws, ss, bs;
    std::vector<uint32_t> is, qs;
    std::vector<uint8_t> es;
    const int R = in[0].shape(0), K = in[0].shape(1);
    const int E = in[2].shape(0), N = in[2].shape(1);
    const float* x = row_major(in[0], xs);
    const uint32_t* index = row_major(in[1], is);
    float* o = out.data<float>();
    ExpertWeights q;
    const float* wf = nullptr;
    const uint32_t* fp4 = nullptr;  // MXFP4 codes [E, N, K / 8] with E8M0 scales
    const uint8_t* exponents = nullptr;
    if (in.size() == 4) {
      fp4 = row_major(in[2], qs);
      exponents = row_major(in[3], es);
    } else if (bits) {
      q = {row_major(in[2], qs), row_major(in[3], ss), row_major(in[4], bs), N, K, group, bits};
    } else {
      wf = row_major(in[2], ws);
    }
    // Runs of rows with one expert, each cut into tiles of output columns: one parallel_for
    // over all of them (a decode step's few rows would otherwise wake the pool once per
    // expert). The kernels called inside run inline on their task's thread.
    struct Task {
      int r0, r1, n0, n1;
    };
    std::vector<Task> tasks;
    const int tile = column_tile(N);
    for (int r0 = 0; r0 < R;) {
      int r1 = r0 + 1;
      while (r1 < R && index[r1] == index[r0]) ++r1;
      for (int n0 = 0; n0 < N; n0 += tile) tasks.push_back({r0, r1, n0, std::min(N, n0 + tile)});
      r0 = r1;
    }
    ThreadPool::shared().parallel_for(static_cast<int>(tasks.size()), [&](int i) {
      const auto& t = tasks[static_cast<size_t>(i)];
      const uint32_t e = index[t.r0];
      const int rows = t.r1 - t.r0, cols = t.n1 - t.n0;
      if (e >= static_cast<uint32_t>(E)) {
        for (int r = t.r0; r < t.r1; ++r) {
          std::fill(o + int64_t{r} * N + t.n0, o + int64_t{r} * N + t.n1, 0.0f);
        }
        return;
      }
      // One row's products go straight to the output; more go to scratch [rows, cols] first,
      // then into the output's columns.
      std::vector<float> scratch(rows > 1 ? static_cast<size_t>(rows) * cols : 0);
      float* part = rows > 1 ? scratch.data() : o + int64_t{t.r0} * N + t.n0;
      if (fp4) {
        mxfp4_matmul_rows(x + int64_t{t.r0} * K, rows, K, fp4 + int64_t{e} * N * (K / 8),
                          exponents + int64_t{e} * N * (K / 32), t.n0, t.n1, part);
      } else if (bits) {
        q.product(e, x + int64_t{t.r0} * K, rows, t.n0, t.n1, part);
      } else {
        float_matmul_rows(x + int64_t{t.r0} * K, rows, K, wf + (int64_t{e} * N + t.n0) * K, cols,
                          part);
      }
      for (int r = 0; r < rows && rows > 1; ++r) {
        std::copy_n(part + int64_t{r} * cols, cols, o + int64_t{t.r0 + r} * N + t.n0);
      }
    });
  }

  int group_size_;
  int bits_;
};

}  // namespace

bool gather_matmul_supported(const mx::array& x, const mx::array& w, const mx::array* scales,
                             const mx::array* biases, const mx::array& indices, int group_size,
                             int bits, const mx::Stream& s) {
  if (s.device != mx::Device::cpu || x.dtype() != mx::float32 || x.ndim() < 2 || x.shape(-2) != 1 ||
      indices.dtype() != mx::uint32 || w.ndim() != 3) {
    return false;
  }
  // x's batch dims must broadcast to the indices' and add none of their own.
  const mx::Shape batch(x.shape().begin(), x.shape().end() - 2);
  if (batch.size() > indices.ndim()) return false;
  for (size_t i = 0; i < batch.size(); ++i) {
    const int b = batch[batch.size() - 1 - i];
    if (b != 1 && b != indices.shape(static_cast<int>(indices.ndim() - 1 - i))) return false;
  }
  const int K = x.shape(-1);
  if (!scales) {
    return avx2_supported() && w.dtype() == mx::float32 && w.shape(2) == K && K % 8 == 0 && K > 0;
  }
  if (!biases) {  // MLX's mxfp4: E8M0 scales, one per 32 values
    return scales->dtype() == mx::uint8 && w.dtype() == mx::uint32 && group_size == 32 &&
           bits == 4 && K % 32 == 0 && w.shape(2) * 8 == K && scales->ndim() == 3 &&
           scales->shape(0) == w.shape(0) && scales->shape(1) == w.shape(1) &&
           scales->shape(2) == K / 32;
  }
  // One expert's operands have the shapes the dense kernel takes.
  return affine_expert_shapes(w, *scales, *biases, w.shape(1), K, group_size, bits);
}

mx::array gather_matmul(const mx::array& x, const mx::array& w, const mx::array* scales,
                        const mx::array* biases, const mx::array& indices, int group_size, int bits,
                        mx::StreamOrDevice s) {
  const auto stream = mx::to_stream(s);
  if (!gather_matmul_supported(x, w, scales, biases, indices, group_size, bits, stream)) {
    throw std::invalid_argument("gather_matmul: operands its kernel does not take");
  }
  // One row of x per index.
  auto shape = indices.shape();
  shape.push_back(1);
  shape.push_back(x.shape(-1));
  const int rows = static_cast<int>(indices.size());
  std::vector<mx::array> inputs{
      mx::reshape(mx::broadcast_to(x, shape, stream), {rows, x.shape(-1)}, stream),
      mx::flatten(indices, stream), w};
  if (scales) inputs.push_back(*scales);
  if (biases) inputs.push_back(*biases);
  shape.back() = w.shape(1);
  auto out = mx::array(
      {rows, w.shape(1)}, mx::float32,
      std::make_shared<GatherMatmulCpu>(stream, scales ? group_size : 0, scales ? bits : 0),
      std::move(inputs));
  return mx::reshape(out, shape, stream);
}

}  // namespace heron::kernels
