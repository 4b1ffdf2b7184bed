#include "heron/model/layers/moe.h"

#include <mlx/ops.h>
#include <mlx/transforms.h>

#include "heron/core/error.h"
#include "heron/kernels/gather_matmul.h"
#include "heron/kernels/route_top_k.h"
#include "heron/model/layers/mlp.h"

namespace heron::model {

namespace mx = mlx::core;

namespace {

// Below this many (token, expert) pairs the rows go to gather_mm in token order; above
// it they are sorted by expert first, so each expert's weights are read once (prefill).
constexpr size_t kSortFrom = 64;

// MLX's gather_qmm takes groups of 32 values and up.
constexpr int kMlxSmallestGroup = 32;

std::string expert_prefix(const std::string& prefix, int e, const std::string& name) {
  return prefix + ".experts." + std::to_string(e) + "." + name;
}

}  // namespace

SwitchLinear SwitchLinear::load(Weights& w, const std::string& prefix, const std::string& name,
                                int experts) {
  SwitchLinear l;
  // mlx-lm stacks most mixtures' experts in switch_mlp, gpt-oss's in experts.
  std::string stacked = prefix + ".switch_mlp." + name;
  if (!w.has(stacked + ".weight")) stacked = prefix + ".experts." + name;
  std::string quant_prefix = stacked;
  if (w.has(stacked + ".weight")) {
    l.weight_ = w.take(stacked + ".weight");
    l.scales_ = w.take_optional(stacked + ".scales");
    if (l.scales_) l.quant_ = quant_params(w, stacked, l.weight_, *l.scales_);
    if (l.quant_.mode == "affine" && l.scales_) l.biases_ = w.take(stacked + ".biases");
    l.bias_ = w.take_optional(stacked + ".bias");
  } else {
    // One layer per expert: stack them, each quantized (or not) as the first one is.
    quant_prefix = expert_prefix(prefix, 0, name);
    std::vector<mx::array> weights, scales, biases, bias;
    for (int e = 0; e < experts; ++e) {
      const std::string p = expert_prefix(prefix, e, name);
      weights.push_back(w.take(p + ".weight"));
      if (auto b = w.take_optional(p + ".bias")) bias.push_back(*b);
      auto s = w.take_optional(p + ".scales");
      const auto q = s ? quant_params(w, p, weights.back(), *s) : QuantParams{};
      if (e > 0 && !(q == l.quant_)) {
        throw Error(w.source() + ": the experts of '" + prefix + "' are not all quantized alike");
      }
      l.quant_ = q;
      if (!s) continue;
      scales.push_back(*s);
      if (q.mode == "affine") biases.push_back(w.take(p + ".biases"));
    }
    l.weight_ = mx::stack(weights, 0);
    if (!scales.empty()) l.scales_ = mx::stack(scales, 0);
    if (!biases.empty()) l.biases_ = mx::stack(biases, 0);
    if (!bias.empty() && static_cast<int>(bias.size()) != experts) {
      throw Error(w.source() + ": only some experts of '" + prefix + "' have a bias");
    }
    if (!bias.empty()) l.bias_ = mx::stack(bias, 0);
    // Made now, so that the parts' buffers can go.
    std::vector<mx::array> made{l.weight_};
    for (const auto& part : {l.scales_, l.biases_, l.bias_}) {
      if (part) made.push_back(*part);
    }
    mx::eval(made);
  }
  if (l.weight_.ndim() != 3 || l.weight_.shape(0) != experts) {
    throw Error(w.source() + ": '" + quant_prefix + "' does not hold " + std::to_string(experts) +
                " experts' matrices");
  }
  if (l.bias_ && (l.bias_->ndim() != 2 || l.bias_->shape(0) != experts ||
                  l.bias_->shape(1) != l.weight_.shape(1))) {
    throw Error(w.source() + ": '" + quant_prefix + "' has a bias of the wrong shape");
  }
  if (l.bias_) l.bias_ = mx::astype(*l.bias_, w.dtype());
  if (!l.scales_) {
    l.weight_ = mx::astype(l.weight_, w.dtype());
    l.weight_t_ = mx::swapaxes(l.weight_, -1, -2);
  } else if (l.biases_) {
    l.scales_ = mx::astype(*l.scales_, w.dtype());
    l.biases_ = mx::astype(*l.biases_, w.dtype());
  }
  return l;
}

mx::array SwitchLinear::operator()(const mx::array& x, const mx::array& indices,
                                   bool sorted) const {
  auto y = product(x, indices, sorted);
  if (!bias_) return y;
  // Each row's expert's bias: [..., out] -> [..., 1, out], as the product's rows.
  return mx::add(y, mx::expand_dims(mx::take(*bias_, indices, 0), -2));
}

mx::array SwitchLinear::product(const mx::array& x, const mx::array& indices, bool sorted) const {
  const mx::array* scales = scales_ ? &*scales_ : nullptr;
  const mx::array* biases = biases_ ? &*biases_ : nullptr;
  if (kernels::gather_matmul_supported(x, weight_, scales, biases, indices, quant_.group_size,
                                       quant_.bits, mx::to_stream({}))) {
    return kernels::gather_matmul(x, weight_, scales, biases, indices, quant_.group_size,
                                  quant_.bits);
  }
  if (!quant_.bits) return mx::gather_mm(x, *weight_t_, std::nullopt, indices, sorted);
  if (quant_.group_size < kMlxSmallestGroup) return dequantized_product(x, indices, sorted);
  return mx::gather_qmm(x, weight_, *scales_, biases_, std::nullopt, indices, /*transpose=*/true,
                        quant_.group_size, quant_.bits, quant_.mode, std::nullopt, sorted);
}

mx::array SwitchLinear::dequantized_product(const mx::array& x, const mx::array& indices,
                                            bool sorted) const {
  const auto flat = mx::flatten(indices);
  auto dense = [&](const std::optional<mx::array>& rows) {
    auto pick = [&](const mx::array& a) { return rows ? mx::take(a, *rows, 0) : a; };
    std::optional<mx::array> biases;
    if (biases_) biases = pick(*biases_);
    return mx::swapaxes(mx::dequantize(pick(weight_), pick(*scales_), biases, quant_.group_size,
                                       quant_.bits, quant_.mode),
                        -1, -2);  // [.., in, out]
  };
  if (static_cast<int>(flat.size()) > weight_.shape(0)) {
    return mx::gather_mm(x, dense(std::nullopt), std::nullopt, indices, sorted);
  }
  // Few rows (decode): only the chosen experts, one product per row.
  auto shape = indices.shape();
  shape.push_back(1);
  shape.push_back(x.shape(-1));
  const int rows = static_cast<int>(flat.size());
  const auto xs = mx::reshape(mx::broadcast_to(x, shape), {rows, 1, x.shape(-1)});
  shape.back() = weight_.shape(1);
  return mx::reshape(mx::matmul(xs, dense(flat)), shape);
}

std::optional<kernels::QuantizedExperts> SwitchLinear::affine() const {
  if (!scales_ || !biases_ || bias_) return std::nullopt;
  return kernels::QuantizedExperts{weight_, *scales_, *biases_, quant_.group_size, quant_.bits};
}

std::optional<SwitchLinear> SwitchLinear::joined(const SwitchLinear& a, const SwitchLinear& b) {
  const bool alike = a.quant_ == b.quant_ && a.weight_.dtype() == b.weight_.dtype() &&
                     a.weight_.shape(2) == b.weight_.shape(2) &&
                     a.scales_.has_value() == b.scales_.has_value() &&
                     a.biases_.has_value() == b.biases_.has_value() &&
                     a.bias_.has_value() == b.bias_.has_value() &&
                     (!a.scales_ || a.scales_->dtype() == b.scales_->dtype());
  if (!alike) return std::nullopt;
  SwitchLinear j = a;
  j.weight_ = mx::concatenate({a.weight_, b.weight_}, 1);
  std::vector<mx::array> made{j.weight_};
  if (a.scales_) made.push_back(*(j.scales_ = mx::concatenate({*a.scales_, *b.scales_}, 1)));
  if (a.biases_) made.push_back(*(j.biases_ = mx::concatenate({*a.biases_, *b.biases_}, 1)));
  if (a.bias_) made.push_back(*(j.bias_ = mx::concatenate({*a.bias_, *b.bias_}, 1)));
  mx::eval(made);
  if (a.weight_t_) j.weight_t_ = mx::swapaxes(j.weight_, -1, -2);
  return j;
}

MixtureOfExperts MixtureOfExperts::load(Weights& w, const std::string& prefix,
                                        const ModelConfig& c) {
  MixtureOfExperts m;
  // The router: Qwen3-MoE's gate, gpt-oss's router (with a bias).
  const std::string router = prefix + (w.has(prefix + ".router.weight") ? ".router" : ".gate");
  m.router_ = Linear::load(w, router);
  if (m.router_.out_features() != c.num_experts) {
    throw Error(w.source() + ": '" + router + "' routes to " +
                std::to_string(m.router_.out_features()) + " experts, the config says " +
                std::to_string(c.num_experts));
  }
  auto gate = SwitchLinear::load(w, prefix, "gate_proj", c.num_experts);
  auto up = SwitchLinear::load(w, prefix, "up_proj", c.num_experts);
  m.gate_up_ = SwitchLinear::joined(gate, up);
  if (!m.gate_up_) {
    m.gate_ = std::move(gate);
    m.up_ = std::move(up);
  }
  m.down_ = SwitchLinear::load(w, prefix, "down_proj", c.num_experts);
  m.top_k_ = c.experts_per_token;
  m.normalize_ = c.norm_topk_prob;
  m.swiglu_limit_ = c.swiglu_limit;
  if (c.sigmoid_routing) {
    const std::string bias = router + ".e_score_correction_bias";
    auto b = w.take(bias);
    if (b.ndim() != 1 || b.shape(0) != c.num_experts) {
      throw Error(w.source() + ": '" + bias + "' must hold one value per expert");
    }
    m.score_bias_ = mx::astype(b, mx::float32);
    m.groups_ = c.expert_groups;
    m.topk_groups_ = c.topk_groups;
    m.scaling_ = c.routed_scaling;
  }
  if (c.num_shared_experts > 0) m.shared_ = GatedMLP::load(w, prefix + ".shared_experts");
  if (c.shared_expert_intermediate_size > 0) {
    m.shared_ = GatedMLP::load(w, prefix + ".shared_expert");
    m.shared_gate_ = Linear::load(w, prefix + ".shared_expert_gate");
  }
  return m;
}

std::pair<mx::array, mx::array> MixtureOfExperts::route_sigmoid(const mx::array& logits) const {
  const kernels::SigmoidRouting rule{.k = top_k_,
                                     .groups = groups_,
                                     .topk_groups = topk_groups_,
                                     .normalize = normalize_,
                                     .scaling = scaling_};
  if (kernels::route_sigmoid_top_k_supported(logits, *score_bias_, rule, mx::to_stream({}))) {
    return kernels::route_sigmoid_top_k(logits, *score_bias_, rule);
  }
  const auto scores = mx::sigmoid(mx::astype(logits, mx::float32));
  // The bias only steers the choice (it balances the experts' load); weights are the scores.
  auto biased = mx::add(scores, *score_bias_);
  const int experts = biased.shape(-1);
  if (groups_ > 1) {
    // Groups ranked by the sum of their two best scores; all but the best topk_groups_ out.
    auto grouped_shape = biased.shape();
    grouped_shape.back() = groups_;
    grouped_shape.push_back(experts / groups_);
    auto grouped = mx::reshape(biased, grouped_shape);
    const auto group_scores = mx::sum(mx::topk(grouped, 2, -1), -1, /*keepdims=*/true);
    const int dropped = groups_ - topk_groups_;
    auto stop = group_scores.shape();
    stop[stop.size() - 2] = dropped;
    const auto drop =
        mx::slice(mx::argpartition(group_scores, dropped - 1, -2), mx::Shape(stop.size(), 0), stop);
    grouped = mx::put_along_axis(grouped, drop, mx::array(0.0f), -2);
    biased = mx::reshape(grouped, scores.shape());
  }
  auto stop = biased.shape();
  stop.back() = top_k_;
  auto chosen = mx::slice(mx::argpartition(mx::negative(biased), top_k_ - 1, -1),
                          mx::Shape(stop.size(), 0), stop);
  auto weights = mx::take_along_axis(scores, chosen, -1);
  if (top_k_ > 1 && normalize_) {
    weights =
        mx::divide(weights, mx::add(mx::sum(weights, -1, /*keepdims=*/true), mx::array(1e-20f)));
  }
  return {chosen, mx::multiply(weights, mx::array(scaling_))};
}

std::pair<mx::array, mx::array> MixtureOfExperts::route(const mx::array& logits) const {
  if (score_bias_) return route_sigmoid(logits);
  if (kernels::route_top_k_supported(logits, top_k_, mx::to_stream({}))) {
    return kernels::route_top_k(logits, top_k_, normalize_);
  }
  const auto probs = mx::softmax(logits, -1, /*precise=*/true);
  auto stop = probs.shape();
  stop.back() = top_k_;
  auto chosen = mx::slice(mx::argpartition(mx::negative(probs), top_k_ - 1, -1),
                          mx::Shape(stop.size(), 0), stop);
  auto weights = mx::take_along_axis(probs, chosen, -1);
  if (normalize_) weights = mx::divide(weights, mx::sum(weights, -1, /*keepdims=*/true));
  return {chosen, weights};
}

mx::array MixtureOfExperts::gated(const mx::array& x, const mx::array& experts, bool sorted) const {
  auto gate_times_up = [&](const mx::array& gate, const mx::array& up) {
    return swiglu_limit_ > 0 ? clamped_swiglu(gate, up, swiglu_limit_) : swiglu(gate, up);
  };
  if (!gate_up_) return gate_times_up((*gate_)(x, experts, sorted), (*up_)(x, experts, sorted));
  const auto both = (*gate_up_)(x, experts, sorted);
  const int half = gate_up_->out_features() / 2;
  const auto parts = mx::split(both, mx::Shape{half}, -1);
  return gate_times_up(parts[0], parts[1]);
}

mx::array MixtureOfExperts::operator()(const mx::array& x) const {
  auto routed = experts(x);
  if (!shared_) return routed;
  auto shared = (*shared_)(x);
  if (shared_gate_) shared = mx::multiply(mx::sigmoid((*shared_gate_)(x)), shared);
  return mx::add(routed, shared);
}

mx::array MixtureOfExperts::experts(const mx::array& x) const {
  const auto [chosen, weights] = route(router_(x));
  // A few tokens (decode) on the CPU: the experts in one node.
  const auto gate_up = gate_up_ ? gate_up_->affine() : std::nullopt;
  const auto down = down_.affine();
  if (gate_up && down && swiglu_limit_ == 0 && chosen.size() < kSortFrom) {
    const auto tokens = mx::reshape(x, {-1, x.shape(-1)});
    const auto experts = mx::reshape(chosen, {-1, top_k_});
    const auto shares = mx::reshape(weights, {-1, top_k_});
    if (kernels::moe_experts_supported(tokens, experts, shares, *gate_up, *down,
                                       mx::to_stream({}))) {
      return mx::reshape(kernels::moe_experts(tokens, experts, shares, *gate_up, *down), x.shape());
    }
  }
  const auto rows = mx::expand_dims(x, {-2, -3});  // [..., 1, 1, hidden]: one row per token
  mx::array y{0.0f};
  if (chosen.size() < kSortFrom) {
    const auto h = gated(rows, chosen, false);
    y = mx::squeeze(down_(h, chosen, false), -2);  // [..., k, hidden]
  } else {
    // One row per (token, expert) pair, ordered by expert, then back in token order.
    const auto flat = mx::flatten(chosen);
    const auto order = mx::argsort(flat);
    const auto pairs = mx::take(mx::flatten(rows, 0, -3),
                                mx::floor_divide(order, mx::array(top_k_, order.dtype())), 0);
    const auto experts = mx::take(flat, order);
    const auto h = gated(pairs, experts, true);
    auto shape = chosen.shape();
    shape.push_back(x.shape(-1));
    y = mx::reshape(mx::take(down_(h, experts, true), mx::argsort(order), 0), shape);
  }
  // Float32 router weights (sigmoid routing) must not promote a half-precision model.
  return mx::astype(mx::sum(mx::multiply(y, mx::expand_dims(weights, -1)), -2), x.dtype());
}

}  // namespace heron::model
