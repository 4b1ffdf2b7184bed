#include "heron/cache/kv_cache.h"

#include <mlx/ops.h>

#include "heron/core/error.h"

namespace heron::cache {

namespace mx = mlx::core;

int KVCache::capacity() const { return keys_ ? keys_->shape(2) : 0; }

KVHistory KVCache::update(const mx::array& keys, const mx::array& values) {
  const int n = keys.shape(2);
  const int end = offset_ + n;
  if (end > capacity()) {
    // Keep the first offset_ positions (a rewind may have left a stale tail) and add
    // whole kSteps until the new tokens fit.
    const int kept = keys_ ? offset_ : 0;
    const int grow = ((end - kept + kStep - 1) / kStep) * kStep;
    auto k_shape = keys.shape();
    auto v_shape = values.shape();
    k_shape[2] = grow;
    v_shape[2] = grow;
    auto k_new = mx::zeros(k_shape, keys.dtype());
    auto v_new = mx::zeros(v_shape, values.dtype());
    if (keys_) {
      // Trim unused tail (after a rewind) before appending the fresh block.
      keys_ = mx::concatenate({mx::slice(*keys_, {0, 0, 0, 0}, {k_shape[0], k_shape[1], offset_,
                                                                k_shape[3]}),
                               k_new},
                              2);
      values_ = mx::concatenate({mx::slice(*values_, {0, 0, 0, 0}, {v_shape[0], v_shape[1],
                                                                    offset_, v_shape[3]}),
                                 v_new},
                                2);
    } else {
      keys_ = k_new;
      values_ = v_new;
    }
  }
  const auto& ks = keys_->shape();
  const auto& vs = values_->shape();
  keys_ = mx::slice_update(*keys_, keys, mx::Shape{0, 0, offset_, 0},
                           mx::Shape{ks[0], ks[1], end, ks[3]});
  values_ = mx::slice_update(*values_, values, mx::Shape{0, 0, offset_, 0},
                             mx::Shape{vs[0], vs[1], end, vs[3]});
  offset_ = end;
  return {mx::slice(*keys_, {0, 0, 0, 0}, {ks[0], ks[1], end, ks[3]}),
          mx::slice(*values_, {0, 0, 0, 0}, {vs[0], vs[1], end, vs[3]})};
}

void KVCache::rewind(int n) {
  if (n < 0 || n > offset_) {
    throw Error("cannot rewind the KV cache by " + std::to_string(n) + " positions (holds " +
                std::to_string(offset_) + ")");
  }
  offset_ -= n;
}

size_t KVCache::nbytes() const {
  return (keys_ ? keys_->nbytes() : 0) + (values_ ? values_->nbytes() : 0);
}

Caches make_kv_caches(int num_layers) {
  Caches caches;
  caches.reserve(static_cast<size_t>(num_layers));
  for (int i = 0; i < num_layers; ++i) caches.push_back(std::make_unique<KVCache>());
  return caches;
}

}  // namespace heron::cache
