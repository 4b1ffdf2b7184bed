// Qwen3-Next (qwen3_next) and Qwen3.5 (qwen3_5, qwen3_5_moe; the language model alone):
// the shared decoder with gated delta-net linear attention in three of every four layers,
// attention with an output gate and RoPE on a quarter of each head in the others,
// per-head RMSNorm on queries and keys, and experts with a gated shared expert where the
// config has them. Hugging Face checkpoints store the RMSNorm weights as w for a scale of
// 1 + w and the convolution as [channels, 1, kernel]; mlx-lm's files hold 1 + w and
// [channels, kernel, 1]: the convolution's layout tells which. Their multi-token-prediction
// head (mtp.*), where the files have it, drafts for them (model/layers/mtp_head).
#include "heron/model/arch/archs.h"
#include "heron/model/layers/decoder.h"

namespace heron::model::arch {

std::unique_ptr<Model> build_qwen3_next(const ModelConfig& config, Weights& weights) {
  ModelConfig c = config;
  for (int i = 0; i < c.num_layers; ++i) {
    if (!c.layer_is_recurrent(i)) continue;
    const auto* conv =
        weights.find("model.layers." + std::to_string(i) + ".linear_attn.conv1d.weight");
    c.norm_weight_offset = conv != nullptr && conv->ndim() == 3 && conv->shape(2) != 1;
    break;
  }
  return std::make_unique<DecoderModel>(c, weights,
                                        DecoderOptions{.qk_norm = true, .prediction_head = true});
}

}  // namespace heron::model::arch
