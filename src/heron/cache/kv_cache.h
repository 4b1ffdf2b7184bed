#pragma once
#include <optional>

#include "heron/cache/cache.h"

namespace heron::cache {

// Keys/values in preallocated buffers that grow in steps of kStep positions, so a
// decode step writes in place instead of concatenating the whole history.
class KVCache : public Cache {
 public:
  static constexpr int kStep = 256;

  KVHistory update(const mlx::core::array& keys, const mlx::core::array& values) override;
  int offset() const override { return offset_; }
  void rewind(int n) override;
  size_t nbytes() const override;
  int capacity() const;

 private:
  std::optional<mlx::core::array> keys_, values_;
  int offset_ = 0;
};

Caches make_kv_caches(int num_layers);

}  // namespace heron::cache
