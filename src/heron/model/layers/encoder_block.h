#pragma once
// BERT's post-norm encoder block: every token attends to every real token of its row
// (padding is masked out), then a GELU (erf) MLP; each sublayer adds its input back and
// normalizes with LayerNorm.
#include <string>

#include <mlx/array.h>

#include "heron/model/encoder.h"
#include "heron/model/layers/linear.h"
#include "heron/model/layers/norm.h"

namespace heron::model {

class EncoderBlock {
 public:
  // prefix: "encoder.layer.N" (Hugging Face BertLayer names below it).
  static EncoderBlock load(Weights& w, const std::string& prefix, const EncoderConfig& config);
  // x [B, L, hidden], right-padded; lengths [B] int32: each row's real tokens.
  mlx::core::array operator()(const mlx::core::array& x, const mlx::core::array& lengths) const;

 private:
  LinearGroup qkv_;
  Linear attention_out_, intermediate_, output_;
  LayerNorm attention_norm_, output_norm_;
  int heads_ = 0;
};

}  // namespace heron::model
