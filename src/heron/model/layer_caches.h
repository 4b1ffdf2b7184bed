#pragma once
// One cache per layer as the model's attention needs it: a rotating window for
// sliding-window layers, a latent cache for latent-attention layers, a recurrent state for
// linear-attention layers, a full KV cache for the others. slack: how far a write may be
// rolled back in the windows and recurrent states (0: their defaults).
#include "heron/cache/cache.h"
#include "heron/model/config.h"

namespace heron::model {

cache::Caches make_layer_caches(const ModelConfig& config, int slack = 0);  // 0: the default

}  // namespace heron::model
