#include "heron/store/quantize_plan.h"

#include "heron/core/error.h"
#include "heron/io/text_model_names.h"

namespace heron::store {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_router(const std::string& name) {
  return ends_with(name, ".mlp.gate.weight") || name.find(".router.") != std::string::npos ||
         ends_with(name, "shared_expert_gate.weight");
}

// 8 bits in the same family: affine stays affine; the float modes use mxfp8.
QuantType eight_bit(const QuantType& q) {
  if (q.mode == "affine") return {"int8", "affine", 8, 64};
  return {"mxfp8", "mxfp8", 8, 32};
}

}  // namespace

QuantType QuantType::parse(const std::string& text) {
  if (text == "int4" || text == "q4") return {"int4", "affine", 4, 64};
  if (text == "int8" || text == "q8") return {"int8", "affine", 8, 64};
  if (text == "mxfp4") return {"mxfp4", "mxfp4", 4, 32};
  if (text == "mxfp8") return {"mxfp8", "mxfp8", 8, 32};
  if (text == "nvfp4") return {"nvfp4", "nvfp4", 4, 16};
  throw Error("unknown quantization type '" + text +
              "' (choose int4, int8, mxfp4, mxfp8 or nvfp4; q4 and q8 are aliases)");
}

std::optional<QuantType> plan_tensor(const std::string& name, const mlx::core::array& tensor,
                                     const QuantType& q, bool tied_embeddings) {
  // 2-D matrices, and the stacked matrices of a mixture's experts (quantized per expert;
  // mlx-lm's switch_mlp, or experts as gpt-oss names them).
  const bool stacked_experts =
      tensor.ndim() == 3 && (name.find(".switch_mlp.") != std::string::npos ||
                             name.find(".mlp.experts.") != std::string::npos);
  if (!ends_with(name, ".weight") || (tensor.ndim() != 2 && !stacked_experts)) return std::nullopt;
  if (!mlx::core::issubdtype(tensor.dtype(), mlx::core::floating)) return std::nullopt;
  if (name.find("norm") != std::string::npos || is_router(name)) return std::nullopt;
  const std::string text_name = io::text_model_name(name);  // a multimodal model's too
  const bool head = text_name == "lm_head.weight" ||
                    (tied_embeddings && text_name == "model.embed_tokens.weight");
  const bool sensitive_at_int4 = q.label == "int4" && (ends_with(name, ".k_proj.weight") ||
                                                       ends_with(name, ".v_proj.weight") ||
                                                       ends_with(name, ".down_proj.weight"));
  const QuantType chosen = head || sensitive_at_int4 ? eight_bit(q) : q;
  if (tensor.shape(-1) % chosen.group_size != 0) return std::nullopt;
  return chosen;
}

nlohmann::json quant_entry(const QuantType& q) {
  return {{"group_size", q.group_size}, {"bits", q.bits}, {"mode", q.mode}};
}

}  // namespace heron::store
