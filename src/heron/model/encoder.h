#pragma once
// The interface of text encoders (BERT-family sentence embedders): token ids in, one
// hidden state per token out; pooling into one vector per text is model::Pooling's.
#include <mlx/array.h>

#include "heron/model/config.h"

namespace heron::model {

class Encoder {
 public:
  explicit Encoder(EncoderConfig config) : config_(std::move(config)) {}
  virtual ~Encoder() = default;
  // ids [B, L] int32, padded on the right; lengths [B] int32, each row's real tokens.
  // Returns [B, L, hidden]: rows past a length are undefined.
  virtual mlx::core::array forward(const mlx::core::array& ids,
                                   const mlx::core::array& lengths) const = 0;
  const EncoderConfig& config() const { return config_; }

 private:
  EncoderConfig config_;
};

}  // namespace heron::model
