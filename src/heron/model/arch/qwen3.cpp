// Qwen3 models: the Llama layout plus per-head RMSNorm on queries and keys (applied
// before RoPE), and a head_dim that need not equal hidden/heads. Qwen3-MoE (qwen3_moe,
// GGUF qwen3moe) is the same with mixture-of-experts layers, which its config names.
#include "heron/model/arch/archs.h"
#include "heron/model/layers/decoder.h"

namespace heron::model::arch {

std::unique_ptr<Model> build_qwen3(const ModelConfig& config, Weights& weights) {
  return std::make_unique<DecoderModel>(config, weights, DecoderOptions{.qk_norm = true});
}

}  // namespace heron::model::arch
