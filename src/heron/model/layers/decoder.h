#pragma once
// A pre-norm decoder-only transformer (embeddings, N blocks of attention + gated MLP or
// mixture of experts, final norm, output head). Architectures configure it in their own
// short files; which layers have experts, and which attend through a sliding window, is
// the config's (ModelConfig::layer_has_experts, window_of_layer), as is latent attention
// in place of grouped-query attention (ModelConfig::latent_attention), and which layers are
// gated delta-net linear attention instead (ModelConfig::layer_is_recurrent).
#include <functional>
#include <memory>
#include <variant>
#include <vector>

#include "heron/model/layers/attention.h"
#include "heron/model/layers/gated_delta_net.h"
#include "heron/model/layers/latent_attention.h"
#include "heron/model/layers/mlp.h"
#include "heron/model/layers/moe.h"
#include "heron/model/model.h"

namespace heron::model {

struct DecoderOptions {
  bool qk_norm = false;
  bool prediction_head = false;  // load the files' multi-token-prediction head (mtp.*), if any
};

// The final norm and the output head over a decoder's last hidden states h [B, L, hidden]:
// logits for every position or the last (batch.logits_for), and, when asked for, every
// position's normed hidden state.
Output decoder_output(const mlx::core::array& h, const Batch& batch, const RMSNorm& norm,
                      const std::function<mlx::core::array(const mlx::core::array&)>& head,
                      bool want_hiddens);

class DecoderModel : public Model {
 public:
  DecoderModel(const ModelConfig& config, Weights& w, DecoderOptions options);
  Output forward(const Batch& batch, cache::Caches& caches, bool want_hiddens) const override;
  cache::Caches make_caches() const override;
  const PredictionHead* prediction_head() const override { return mtp_.get(); }
  std::optional<SharedLayers> shared_layers() const override {
    return SharedLayers{embed_, norm_, lm_head_ ? &*lm_head_ : nullptr};
  }
  DecoderModel(const DecoderModel&) = delete;  // the prediction head refers to its layers
  DecoderModel& operator=(const DecoderModel&) = delete;

 private:
  struct Block {
    RMSNorm input_norm, post_attention_norm;
    std::variant<Attention, LatentAttention, GatedDeltaNet> attention;
    std::variant<GatedMLP, MixtureOfExperts> mlp;
  };
  Embedding embed_;
  std::vector<Block> blocks_;
  RMSNorm norm_;
  std::optional<Linear> lm_head_;  // absent when tied to the embedding
  std::unique_ptr<PredictionHead> mtp_;
};

}  // namespace heron::model
