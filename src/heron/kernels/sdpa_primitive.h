#pragma once
// The MLX primitive that runs sdpa_cpu on a CPU stream, in stream order.
#include <vector>

#include <mlx/primitives.h>

namespace heron::kernels {

class ScaledDotProductAttentionCpu : public mlx::core::UnaryPrimitive {
 public:
  // key_lengths: the fourth input is int32 [B], each batch row's real keys (not a mask).
  // sinks: the last input is float32 [Hq], each head's attention sink.
  ScaledDotProductAttentionCpu(mlx::core::Stream stream, float scale, bool causal,
                               bool key_lengths = false, bool sinks = false)
      : UnaryPrimitive(stream),
        scale_(scale),
        causal_(causal),
        key_lengths_(key_lengths),
        sinks_(sinks) {}

  // inputs: q [B, Hq, L, D], k [B, Hkv, T, D], v [B, Hkv, T, Dv], all float32; optionally a bool mask
  // [L, T] (query i sees key j where true) or the key lengths; then optionally the sinks.
  void eval_cpu(const std::vector<mlx::core::array>& inputs, mlx::core::array& out) override;
  void eval_gpu(const std::vector<mlx::core::array>& inputs, mlx::core::array& out) override;

  const char* name() const override { return "HeronScaledDotProductAttention"; }
  bool is_equivalent(const mlx::core::Primitive& other) const override;
  std::vector<mlx::core::Shape> output_shapes(const std::vector<mlx::core::array>& inputs) override;

 private:
  float scale_;
  bool causal_;
  bool key_lengths_;
  bool sinks_;
};

}  // namespace heron::kernels
