#include "heron/kernels/qmm_primitive.h"

#include <stdexcept>
#include <typeinfo>

#include "heron/kernels/cpu_task.h"
#include "heron/kernels/qmm_cpu.h"

namespace heron::kernels {

namespace mx = mlx::core;

namespace {

void run(const mx::array& x, const mx::array& w, const mx::array& scales, const mx::array& biases,
         mx::array& out, int group_size, int bits) {
  if (out.size() == 0) return;
  std::vector<float> xs, ss, bs;
  std::vector<uint32_t> ws;
  QmmArgs a{};
  a.K = x.shape(-1);
  a.M = static_cast<int>(x.size() / static_cast<size_t>(a.K));
  a.N = w.shape(0);
  a.group_size = group_size;
  a.bits = bits;
  a.x = row_major(x, xs);
  a.w = row_major(w, ws);
  a.scales = row_major(scales, ss);
  a.biases = row_major(biases, bs);
  a.out = out.data<float>();
  qmm_cpu(a);
}

}  // namespace

void QuantizedMatmulCpu::eval_cpu(const std::vector<mx::array>& inputs, mx::array& out) {
  run_on_cpu_stream(stream(), inputs, out,
                    [group_size = group_size_, bits = bits_](auto& in, mx::array& result) {
                      run(in[0], in[1], in[2], in[3], result, group_size, bits);
                    });
}

void QuantizedMatmulCpu::eval_gpu(const std::vector<mx::array>&, mx::array&) {
  throw std::runtime_error("HeronQuantizedMatmul is CPU-only (GPU streams use MLX's kernel)");
}

bool QuantizedMatmulCpu::is_equivalent(const mx::Primitive& other) const {
  if (typeid(other) != typeid(*this)) return false;
  const auto& o = static_cast<const QuantizedMatmulCpu&>(other);
  return group_size_ == o.group_size_ && bits_ == o.bits_;
}

std::vector<mx::Shape> QuantizedMatmulCpu::output_shapes(const std::vector<mx::array>& inputs) {
  auto shape = inputs[0].shape();
  shape.back() = inputs[1].shape(0);
  return {shape};
}

}  // namespace heron::kernels
