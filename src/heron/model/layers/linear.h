#pragma once
// Linear layers and embeddings, float or affine-quantized (MLX packing:
// uint32 weight [out, in*bits/32], scales/biases [out, in/group]).
#include <optional>
#include <string>
#include <vector>

#include <mlx/array.h>

#include "heron/model/weights.h"

namespace heron::model {

struct QuantParams {
  int group_size = 0;  // 0: not quantized
  int bits = 0;
};

class Linear {
 public:
  // Loads PREFIX.weight (+ .scales/.biases when quantized, + .bias when present).
  static Linear load(Weights& w, const std::string& prefix);
  // Layers that read the same input as one layer with their outputs side by side
  // (q/k/v, gate/up): one larger matrix product instead of several small ones, which
  // on GPUs means fewer kernels per token. The parts must agree on input size,
  // quantization and bias; the result is evaluated here so the parts can be freed.
  static Linear concat(const std::vector<Linear>& parts);
  mlx::core::array operator()(const mlx::core::array& x) const;
  int out_features() const { return weight_.shape(0); }

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
