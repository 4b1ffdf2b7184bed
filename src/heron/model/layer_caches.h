#pragma once
// One cache per layer as the model's attention needs it: a rotating window for
// sliding-window layers, a full KV cache for the others. A latent-attention layer's KV
// cache holds its latents as keys and its rotary keys as values (LatentAttention).
#include "heron/cache/cache.h"
#include "heron/model/config.h"

namespace heron::model {

cache::Caches make_layer_caches(const ModelConfig& config, int slack = 0);  // 0: the default

}  // namespace heron::model
