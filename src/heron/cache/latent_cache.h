#pragma once
// Multi-head latent attention's cache (DeepSeek V2/V3, GLM-4.7-Flash): per position the
// compressed latent and the rotary key the heads share, side by side in one row
// [latent | rotary key], never per-head keys and values. update(latent, rotary_key)
// returns the rows as keys and their latent columns as values, a view of the same buffer:
// attention with queries [q in latent space | rotary q] over them is the layer's attention.
#include "heron/cache/cache.h"
#include "heron/cache/kv_cache.h"

namespace heron::cache {

class LatentCache : public Cache {
 public:
  // rank: the latent's width (kv_lora_rank); rope: the rotary key's (qk_rope_head_dim).
  LatentCache(int rank, int rope) : rank_(rank), rope_(rope) {}
  // latent [B, 1, L, rank], rotary_key [B, 1, L, rope] -> keys [B, 1, T, rank + rope],
  // values [B, 1, T, rank].
  KVHistory update(const mlx::core::array& latent, const mlx::core::array& rotary_key) override;
  int offset() const override { return offset_; }
  void rewind(int n) override;
  size_t nbytes() const override { return rows_ ? rows_->nbytes() : 0; }
  // Segments are KVSegments of one part, the rows.
  SegmentPtr save(int begin, int end) const override;
  void load(const Segment& segment) override;
  SegmentPtr segment_from(int begin, int end, std::vector<mlx::core::array> tensors) const override;

 private:
  KVHistory history(const mlx::core::array& rows) const;
  int rank_, rope_;
  std::optional<mlx::core::array> rows_;
  int offset_ = 0;
};

}  // namespace heron::cache
