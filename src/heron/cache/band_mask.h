#pragma once
// The attention mask over keys at consecutive positions: causal, and within a sliding
// window when there is one.
#include <mlx/array.h>

namespace heron::cache {

// [queries, keys] bool for queries at positions [first_query, first_query + queries)
// and keys at [first_key, first_key + keys): key p is visible to query q when p <= q
// and, with window > 0, p > q - window.
mlx::core::array band_mask(int first_query, int queries, int first_key, int keys, int window);

}  // namespace heron::cache
