#include "heron/cache/band_mask.h"

#include <mlx/ops.h>

namespace heron::cache {

namespace mx = mlx::core;

mx::array band_mask(int first_query, int queries, int first_key, int keys, int window) {
  auto rows = mx::reshape(mx::arange(first_query, first_query + queries, mx::int32), {queries, 1});
  auto cols = mx::reshape(mx::arange(first_key, first_key + keys, mx::int32), {1, keys});
  auto mask = mx::less_equal(cols, rows);
  if (window > 0) {
    mask = mx::logical_and(mask, mx::greater(cols, mx::subtract(rows, mx::array(window))));
  }
  return mask;
}

}  // namespace heron::cache
