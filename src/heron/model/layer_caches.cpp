#include "heron/model/layer_caches.h"

#include "heron/cache/kv_cache.h"
#include "heron/cache/latent_cache.h"
#include "heron/cache/recurrent_cache.h"
#include "heron/cache/rotating_kv_cache.h"

namespace heron::model {

cache::Caches make_layer_caches(const ModelConfig& config, int slack) {
  cache::Caches caches;
  caches.reserve(static_cast<size_t>(config.num_layers));
  for (int i = 0; i < config.num_layers; ++i) {
    const int window = config.window_of_layer(i);
    if (config.layer_is_recurrent(i)) {
      const auto& d = config.linear;
      caches.push_back(std::make_unique<cache::RecurrentCache>(
          mlx::core::Shape{d.conv_kernel - 1, d.conv_channels()},
          mlx::core::Shape{d.value_heads, d.value_head_dim, d.key_head_dim},
          slack > 0 ? slack : cache::RecurrentCache::kSlack));
    } else if (config.latent_attention()) {
      caches.push_back(std::make_unique<cache::LatentCache>(config.mla.kv_lora_rank,
                                                            config.mla.qk_rope_head_dim));
    } else if (window == 0) {
      caches.push_back(std::make_unique<cache::KVCache>());
    } else {
      caches.push_back(std::make_unique<cache::RotatingKVCache>(
          window, slack > 0 ? slack : cache::RotatingKVCache::kSlack));
    }
  }
  return caches;
}

}  // namespace heron::model
