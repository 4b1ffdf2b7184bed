// GLM-4.7-Flash (glm4_moe_lite): the shared decoder with multi-head latent attention
// (a low-rank query, one compressed latent and one rotary key per position in the cache,
// interleaved RoPE on the rotary part) and, after the first dense layers, a mixture of
// experts routed by sigmoid scores with a correction bias, plus shared experts. Its
// multi-token-prediction layers (past num_hidden_layers) are not read. llama.cpp's GGUFs of
// it (architecture deepseek2) load here too.
#include "heron/model/arch/archs.h"
#include "heron/model/layers/decoder.h"

namespace heron::model::arch {

std::unique_ptr<Model> build_glm4_moe_lite(const ModelConfig& config, Weights& weights) {
  return std::make_unique<DecoderModel>(config, weights, DecoderOptions{});
}

}  // namespace heron::model::arch
