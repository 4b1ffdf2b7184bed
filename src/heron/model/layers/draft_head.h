#pragma once
// A trained draft head (config.json "architectures": ["HeronDraftHead"]; trained by
// tools/draft_head/train.py, which runs the same computation in PyTorch): the embedding of
// token t + 1 and the model's final normed hidden state at t, side by side through fc,
// one llama decoder block with its own attention and KV cache (layers.0.*), then the
// model's own final norm and output head, the latter restricted to the head's draft
// vocabulary (d2t: int32 [draft vocab], the model's ids of the rows it keeps). Its logits
// come back over the model's whole vocabulary, -inf outside the draft vocabulary, so
// drafts are drawn and verified like any other.
#include <memory>

#include <mlx/array.h>

#include "heron/model/layers/attention.h"
#include "heron/model/layers/linear.h"
#include "heron/model/layers/mlp.h"
#include "heron/model/layers/norm.h"
#include "heron/model/model.h"

namespace heron::model {

class DraftHead : public PredictionHead {
 public:
  // `head` is the head's config (its config.json: its own block, plain RoPE of its own
  // base); `target` outlives the head. Throws heron::Error when the head does not fit the model.
  static std::unique_ptr<DraftHead> load(Weights& w, const ModelConfig& head, const Model& target);
  Output forward(const mlx::core::array& tokens, const mlx::core::array& hiddens, int offset,
                 cache::Caches& caches) const override;
  cache::Caches make_caches() const override;

 private:
  DraftHead(SharedLayers shared, float embed_scale, int vocab, Attention attention, GatedMLP mlp)
      : shared_(shared),
        embed_scale_(embed_scale),
        vocab_(vocab),
        attention_(std::move(attention)),
        mlp_(std::move(mlp)) {}

  SharedLayers shared_;
  float embed_scale_;
  int vocab_;  // the model's
  Linear fc_, output_;
  RMSNorm input_norm_, post_attention_norm_;
  Attention attention_;
  GatedMLP mlp_;
  mlx::core::array draft_ids_{0};  // int32 [1, 1, draft vocab]
};

}  // namespace heron::model
