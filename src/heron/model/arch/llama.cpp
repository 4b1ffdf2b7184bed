// Llama family (Llama 2/3/3.1/3.2, SmolLM2, Mistral-style dense models): the plain
// pre-norm decoder; RoPE scaling comes from the config.
#include "heron/model/arch/archs.h"
#include "heron/model/layers/decoder.h"

namespace heron::model::arch {

std::unique_ptr<Model> build_llama(const ModelConfig& config, Weights& weights) {
  return std::make_unique<DecoderModel>(config, weights, DecoderOptions{.qk_norm = false});
}

}  // namespace heron::model::arch
