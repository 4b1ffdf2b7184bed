#pragma once
// The MLX primitive that runs qmm_cpu on a CPU stream, in stream order.
#include <vector>

#include <mlx/primitives.h>

namespace heron::kernels {

class QuantizedMatmulCpu : public mlx::core::UnaryPrimitive {
 public:
  QuantizedMatmulCpu(mlx::core::Stream stream, int group_size, int bits)
      : UnaryPrimitive(stream), group_size_(group_size), bits_(bits) {}

  // inputs: x [..., K] float32, w [N, K*bits/32] uint32, scales, biases [N, K/group] float32.
  void eval_cpu(const std::vector<mlx::core::array>& inputs, mlx::core::array& out) override;
  void eval_gpu(const std::vector<mlx::core::array>& inputs, mlx::core::array& out) override;

  const char* name() const override { return "HeronQuantizedMatmul"; }
  bool is_equivalent(const mlx::core::Primitive& other) const override;
  std::vector<mlx::core::Shape> output_shapes(const std::vector<mlx::core::array>& inputs) override;

 private:
  int group_size_;
  int bits_;
};

}  // namespace heron::kernels
