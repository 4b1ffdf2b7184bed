#pragma once
// The model interface every architecture implements.
#include <optional>

#include <mlx/array.h>

#include "heron/cache/cache.h"
#include "heron/model/batch.h"
#include "heron/model/config.h"

namespace heron::model {

struct Output {
  mlx::core::array logits;                  // [B, L or 1, vocab]
  std::optional<mlx::core::array> hiddens;  // final hidden states, when asked for
};

class Model {
 public:
  explicit Model(ModelConfig config) : config_(std::move(config)) {}
  virtual ~Model() = default;
  virtual Output forward(const Batch& batch, cache::Caches& caches,
                         bool want_hiddens = false) const = 0;
  virtual cache::Caches make_caches() const = 0;
  const ModelConfig& config() const { return config_; }

 private:
  ModelConfig config_;
};

}  // namespace heron::model
