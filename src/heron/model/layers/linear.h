#pragma once
// Linear layers and embeddings, float or quantized in one of MLX's modes (packing:
// uint32 weight [out, in*bits/32], scales [out, in/group], affine also biases).
#include <optional>
#include <string>

#include <mlx/array.h>

#include "heron/model/weights.h"

namespace heron::model {

struct QuantParams {
  int group_size = 0;  // 0: not quantized
  int bits = 0;
  std::string mode = "affine";  // affine (CPU kernels' fast path), mxfp4, mxfp8, nvfp4
};

class Linear {
 public:
  // Loads PREFIX.weight (+ .scales/.biases when quantized, + .bias when present).
  static Linear load(Weights& w, const std::string& prefix);
  mlx::core::array operator()(const mlx::core::array& x) const;

  const mlx::core::array& weight() const { return weight_; }
  const QuantParams& quant() const { return quant_; }

 private:
  friend class Embedding;
  mlx::core::array weight_{0.0f};
  std::optional<mlx::core::array> scales_, biases_, bias_;
  QuantParams quant_;
  int in_features_ = 0;
};

class Embedding {
 public:
  static Embedding load(Weights& w, const std::string& prefix);
  // ids [B, L] -> [B, L, hidden]
  mlx::core::array operator()(const mlx::core::array& ids) const;
  // Tied output head: hidden -> vocab logits with the embedding matrix.
  mlx::core::array as_linear(const mlx::core::array& x) const { return table_(x); }

 private:
  Linear table_;
  mlx::core::Dtype dtype_ = mlx::core::float32;
};

}  // namespace heron::model
