// gpt-oss: the shared decoder with biased attention projections and per-head attention
// sinks, sliding-window and full layers as the config's layer_types say, YaRN RoPE, and
// a mixture of experts in every layer: a biased router whose top logits are softmaxed,
// experts with biases gated by the clamped SwiGLU. OpenAI's MXFP4 expert blocks are
// rewritten into mlx-lm's layout when read (io/fused_experts.h).
#include "heron/model/arch/archs.h"
#include "heron/model/layers/decoder.h"

namespace heron::model::arch {

std::unique_ptr<Model> build_gpt_oss(const ModelConfig& config, Weights& weights) {
  return std::make_unique<DecoderModel>(config, weights, DecoderOptions{});
}

}  // namespace heron::model::arch
