#pragma once
// The model interface every architecture implements.
#include <optional>

#include <mlx/array.h>

#include "heron/cache/cache.h"
#include "heron/model/batch.h"
#include "heron/model/config.h"

namespace heron::model {

class Embedding;
class Linear;
class RMSNorm;

struct Output {
  mlx::core::array logits;                  // [B, L or 1, vocab]
  std::optional<mlx::core::array> hiddens;  // [B, L, hidden]: every position's, when asked for
};

// A multi-token-prediction head shipped with a model (Qwen3.5's and Qwen3-Next's mtp.*):
// from the model's final hidden state at position t and the embedding of token t + 1 it
// predicts token t + 2, through one attention layer of its own and the model's output head.
class PredictionHead {
 public:
  virtual ~PredictionHead() = default;
  // tokens [1, L]: the tokens after positions offset .. offset + L - 1, whose final hidden
  // states are `hiddens` [1, L, hidden] -> its logits [1, L, vocab] and its own final
  // hidden states (which stand in for the model's where a position has none yet).
  virtual Output forward(const mlx::core::array& tokens, const mlx::core::array& hiddens,
                         int offset, cache::Caches& caches) const = 0;
  virtual cache::Caches make_caches() const = 0;
};

// The layers a trained draft head shares with its model: the token embedding, the final
// norm and the output head (null: tied to the embedding).
struct SharedLayers {
  const Embedding& embed;
  const RMSNorm& norm;
  const Linear* lm_head;
};

class Model {
 public:
  explicit Model(ModelConfig config) : config_(std::move(config)) {}
  virtual ~Model() = default;
  virtual Output forward(const Batch& batch, cache::Caches& caches,
                         bool want_hiddens = false) const = 0;
  virtual cache::Caches make_caches() const = 0;
  // The model's own multi-token-prediction head, when its files have one.
  virtual const PredictionHead* prediction_head() const { return nullptr; }
  // What a draft head may share, for the models that can carry one.
  virtual std::optional<SharedLayers> shared_layers() const { return std::nullopt; }
  const ModelConfig& config() const { return config_; }

 private:
  ModelConfig config_;
};

}  // namespace heron::model
