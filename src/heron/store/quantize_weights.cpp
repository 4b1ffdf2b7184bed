#include "heron/store/quantize_weights.h"

#include <mlx/ops.h>

namespace heron::store {

namespace mx = mlx::core;

PlannedTensors plan_weights(io::WeightMap weights, const std::optional<QuantType>& q,
                            bool tied_embeddings, const std::string& prefix) {
  PlannedTensors out;
  if (q) out.quantization = quant_entry(*q);
  for (auto& [name, a] : weights) {
    out.params += a.size();
    if (!out.float_type && mx::issubdtype(a.dtype(), mx::floating)) out.float_type = a.dtype();
    auto plan = q ? plan_tensor(name, a, *q, tied_embeddings) : std::nullopt;
    if (!plan) {
      out.tensors.push_back({prefix + name, a});
      continue;
    }
    const std::string layer = name.substr(0, name.size() - 7);  // without ".weight"
    auto parts = mx::quantize(a, plan->group_size, plan->bits, plan->mode);
    out.tensors.push_back({prefix + layer + ".weight", parts[0]});
    out.tensors.push_back({prefix + layer + ".scales", parts[1]});
    if (parts.size() > 2) out.tensors.push_back({prefix + layer + ".biases", parts[2]});
    if (!(*plan == *q)) out.quantization[layer] = quant_entry(*plan);
  }
  return out;
}

}  // namespace heron::store
