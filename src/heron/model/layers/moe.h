#pragma once
// Mixture-of-experts feed-forward: a router picks k experts per token, each a gated MLP,
// and their outputs are summed with the router's weights. The experts' matrices are
// stacked on a leading axis and multiplied through MLX's gather_mm / gather_qmm, so a
// decode step reads only the chosen experts' weights.
#include <optional>
#include <string>
#include <utility>

#include <mlx/array.h>

#include "heron/kernels/moe_experts.h"
#include "heron/model/layers/linear.h"
#include "heron/model/layers/mlp.h"

namespace heron::model {

// One projection of every expert: weight [experts, out, in], float or quantized.
class SwitchLinear {
 public:
  // PREFIX.switch_mlp.NAME or PREFIX.experts.NAME (stacked, as mlx-lm and GGUF store
  // them) or, when absent, PREFIX.experts.E.NAME for E < experts (Hugging Face), stacked
  // here; each with its experts' biases (.bias, [experts, out]) where present.
  static SwitchLinear load(Weights& w, const std::string& prefix, const std::string& name,
                           int experts);
  // x [..., 1, in] (rows that share an expert list), indices [...] -> [..., 1, out].
  // sorted: indices ascend along the flattened batch (fewer weight reads in prefill).
  mlx::core::array operator()(const mlx::core::array& x, const mlx::core::array& indices,
                              bool sorted) const;
  // a and b side by side in one layer (outputs a's, then b's), when they are stored alike.
  static std::optional<SwitchLinear> joined(const SwitchLinear& a, const SwitchLinear& b);
  int out_features() const { return weight_.shape(1); }
  // The experts as the fused CPU kernel reads them, when affine-quantized without biases.
  std::optional<kernels::QuantizedExperts> affine() const;

 private:
  // Groups below MLX's smallest (GGUF's 16-value K-quant sub-blocks) where our CPU kernel
  // does not run: the experts dequantized first (the chosen ones for as many rows as there
  // are experts, else all of them), then multiplied as float.
  mlx::core::array dequantized_product(const mlx::core::array& x, const mlx::core::array& indices,
                                       bool sorted) const;
  // The product without the bias.
  mlx::core::array product(const mlx::core::array& x, const mlx::core::array& indices,
                           bool sorted) const;
  mlx::core::array weight_{0.0f};             // quantized: packed [E, out, in*bits/32]
  std::optional<mlx::core::array> weight_t_;  // float: [E, in, out], made once
  std::optional<mlx::core::array> scales_, biases_;
  std::optional<mlx::core::array> bias_;  // [E, out]: added to each row's expert's output
  QuantParams quant_;
};

class MixtureOfExperts {
 public:
  // PREFIX.gate or PREFIX.router (the router, [experts, hidden]; with sigmoid routing
  // also PREFIX.gate.e_score_correction_bias), the experts' gate/up/down projections and,
  // where the config has them, the shared experts (PREFIX.shared_experts, one gated MLP)
  // or Qwen's gated shared expert (PREFIX.shared_expert, scaled by the sigmoid of
  // PREFIX.shared_expert_gate).
  static MixtureOfExperts load(Weights& w, const std::string& prefix, const ModelConfig& c);
  mlx::core::array operator()(const mlx::core::array& x) const;

 private:
  // The top_k_ experts of each token ([..., k], in no particular order) and their weights.
  std::pair<mlx::core::array, mlx::core::array> route(const mlx::core::array& logits) const;
  // The routed experts' share of the output.
  mlx::core::array experts(const mlx::core::array& x) const;
  // The same for a sigmoid router (ModelConfig::sigmoid_routing).
  std::pair<mlx::core::array, mlx::core::array> route_sigmoid(const mlx::core::array& logits) const;
  // silu(gate(x)) * up(x) of the given experts (clamped_swiglu where the config says).
  mlx::core::array gated(const mlx::core::array& x, const mlx::core::array& experts,
                         bool sorted) const;
  Linear router_;
  // The gate and up projections in one product where they are stored alike, else apart.
  std::optional<SwitchLinear> gate_up_;
  std::optional<SwitchLinear> gate_, up_;
  SwitchLinear down_;
  std::optional<GatedMLP> shared_;
  std::optional<Linear> shared_gate_;           // [1, hidden]: the shared expert's share
  std::optional<mlx::core::array> score_bias_;  // [experts] float32: sigmoid routing only
  int top_k_ = 1;
  int groups_ = 1, topk_groups_ = 1;
  bool normalize_ = false;
  float swiglu_limit_ = 0.0f;
  float scaling_ = 1.0f;
};

}  // namespace heron::model
