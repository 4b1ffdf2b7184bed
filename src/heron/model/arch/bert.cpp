// BERT-family encoders (BertModel: all-MiniLM, bge, e5, ...): word, position and token
// type embeddings with LayerNorm, then post-norm encoder blocks.
#include <mlx/ops.h>

#include "heron/model/arch/encoders.h"
#include "heron/model/layers/encoder_block.h"

namespace heron::model::arch {

namespace {

namespace mx = mlx::core;

class Bert : public Encoder {
 public:
  Bert(const EncoderConfig& config, Weights& w) : Encoder(config) {
    // BertModel's own files name tensors from "embeddings."; task checkpoints
    // (BertForMaskedLM, ...) put the same tensors under "bert.".
    const std::string p = w.has("bert.embeddings.word_embeddings.weight") ? "bert." : "";
    words_ = Embedding::load(w, p + "embeddings.word_embeddings");
    positions_ = mx::astype(w.take(p + "embeddings.position_embeddings.weight"), w.dtype());
    token_type_ = mx::astype(w.take(p + "embeddings.token_type_embeddings.weight"), w.dtype());
    norm_ = LayerNorm::load(w, p + "embeddings.LayerNorm", config.layer_norm_eps);
    for (int i = 0; i < config.num_layers; ++i) {
      blocks_.push_back(EncoderBlock::load(w, p + "encoder.layer." + std::to_string(i), config));
    }
  }

  mx::array forward(const mx::array& ids, const mx::array& lengths) const override {
    const int L = ids.shape(1);
    // Every token is of type 0: one text per row.
    auto x = mx::add(mx::add(words_(ids), mx::slice(positions_, {0, 0}, {L, positions_.shape(1)})),
                     mx::slice(token_type_, {0, 0}, {1, token_type_.shape(1)}));
    x = norm_(x);
    for (const auto& block : blocks_) x = block(x, lengths);
    return x;
  }

 private:
  Embedding words_;
  mx::array positions_{0.0f}, token_type_{0.0f};
  LayerNorm norm_;
  std::vector<EncoderBlock> blocks_;
};

}  // namespace

std::unique_ptr<Encoder> build_bert(const EncoderConfig& config, Weights& weights) {
  return std::make_unique<Bert>(config, weights);
}

}  // namespace heron::model::arch
