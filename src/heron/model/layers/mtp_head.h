#pragma once
// Qwen3.5's and Qwen3-Next's multi-token-prediction head (PREFIX = "mtp"): the embedding
// of token t + 1 and the model's final hidden state at t, each RMS-normed
// (PREFIX.pre_fc_norm_embedding, .pre_fc_norm_hidden), side by side through PREFIX.fc, then
// one decoder block (PREFIX.layers.0: gated attention with its own KV cache, and the
// model's kind of feed-forward), PREFIX.norm and the model's output head. Its norms hold w
// for a scale of 1 + w whatever the rest of the files hold (mlx-lm drops the head, create
// keeps it as it comes).
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "heron/model/layers/attention.h"
#include "heron/model/layers/linear.h"
#include "heron/model/layers/mlp.h"
#include "heron/model/layers/moe.h"
#include "heron/model/layers/norm.h"
#include "heron/model/model.h"

namespace heron::model {

class MtpHead : public PredictionHead {
 public:
  // embed and lm_head (null: tied to embed) are the model's and outlive the head.
  static std::unique_ptr<MtpHead> load(Weights& w, const std::string& prefix, const ModelConfig& c,
                                       std::shared_ptr<const Rope> rope, const Embedding& embed,
                                       const Linear* lm_head);
  Output forward(const mlx::core::array& tokens, const mlx::core::array& hiddens, int offset,
                 cache::Caches& caches) const override;
  cache::Caches make_caches() const override;

 private:
  MtpHead(const Embedding& embed, const Linear* lm_head, Attention attention,
          std::variant<GatedMLP, MixtureOfExperts> mlp)
      : embed_(embed), lm_head_(lm_head), attention_(std::move(attention)), mlp_(std::move(mlp)) {}

  const Embedding& embed_;
  const Linear* lm_head_;
  RMSNorm embed_norm_, hidden_norm_, input_norm_, post_attention_norm_, norm_;
  Linear fc_;
  Attention attention_;
  std::variant<GatedMLP, MixtureOfExperts> mlp_;
};

}  // namespace heron::model
