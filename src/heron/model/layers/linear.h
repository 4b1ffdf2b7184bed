#pragma once
// Linear layers and embeddings, float or quantized in one of MLX's modes (packing:
// uint32 weight [out, in*bits/32], scales [out, in/group], affine also biases).
#include <optional>
#include <string>
#include <vector>

#include <mlx/array.h>

#include "heron/model/weights.h"

namespace heron::model {

struct QuantParams {
  int group_size = 0;  // 0: not quantized
  int bits = 0;
  std::string mode = "affine";  // affine (CPU kernels' fast path), mxfp4, mxfp8, nvfp4
  bool operator==(const QuantParams&) const = default;
};

// The quantization of the layer stored as PREFIX.weight (uint32, packed along its last
// axis) with PREFIX.scales: the mode and group from `w`'s schemes, the bits from the
// packed width. Inconsistent shapes are an error naming the layer.
QuantParams quant_params(const Weights& w, const std::string& prefix,
                         const mlx::core::array& weight, const mlx::core::array& scales);

class Linear {
 public:
  // Loads PREFIX.weight (+ .scales/.biases when quantized, + .bias when present).
  static Linear load(Weights& w, const std::string& prefix);
  mlx::core::array operator()(const mlx::core::array& x) const;
  int out_features() const { return weight_.shape(0); }
  // The layer computing only the outputs `indices` (int32 [N]), in their order; its arrays
  // are evaluated copies, so it outlives nothing.
  Linear rows(const mlx::core::array& indices) const;

  const mlx::core::array& weight() const { return weight_; }
  const QuantParams& quant() const { return quant_; }

 private:
  friend class Embedding;
  friend class LinearGroup;
  // Same input size, quantization (and its parameters' dtype), dtype and bias: can share
  // one matrix product.
  bool fusable_with(const Linear& o) const;
  // Float weights are multiplied through this view, [in, out], made once: a transpose
  // per call would add a node to every step's graph (host time per step: architecture.md).
  void make_transposed_view();
  mlx::core::array weight_{0.0f};
  std::optional<mlx::core::array> weight_t_;
  std::optional<mlx::core::array> scales_, biases_, bias_;
  QuantParams quant_;
  int in_features_ = 0;
};

// Layers that read the same input (q/k/v, gate/up). When they agree on input size,
// quantization and bias they run as one larger matrix product with their outputs side
// by side (on GPUs: fewer kernels per token); otherwise, e.g. a 4-bit q_proj beside
// 8-bit k_proj/v_proj, one by one. Fused weights are evaluated at load so the parts'
// arrays can be freed.
class LinearGroup {
 public:
  static LinearGroup load(Weights& w, const std::vector<std::string>& prefixes);
  // One output per layer, in the order of `prefixes`.
  std::vector<mlx::core::array> operator()(const mlx::core::array& x) const;
  bool fused() const { return !splits_.empty(); }

 private:
  std::vector<Linear> layers_;  // the fused layer, or the parts
  mlx::core::Shape splits_;     // where each part's outputs start in the fused output
};

class Embedding {
 public:
  static Embedding load(Weights& w, const std::string& prefix);
  // ids [B, L] -> [B, L, hidden]
  mlx::core::array operator()(const mlx::core::array& ids) const;
  // Tied output head: hidden -> vocab logits with the embedding matrix.
  mlx::core::array as_linear(const mlx::core::array& x) const { return table_(x); }
  const Linear& table() const { return table_; }
  mlx::core::Dtype dtype() const { return dtype_; }  // of what it gives

 private:
  Linear table_;
  mlx::core::Dtype dtype_ = mlx::core::float32;
};

}  // namespace heron::model
