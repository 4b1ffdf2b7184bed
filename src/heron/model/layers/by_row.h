#pragma once
// The cached part of a layer in a batched forward: each row runs against its own cache,
// on its own tokens (its segment of the packed batch) at its own offset, so it computes
// exactly what it computes alone. The projections around it see the whole batch, which
// is where a batch saves its time.
#include <functional>
#include <vector>

#include <mlx/array.h>

#include "heron/cache/cache.h"
#include "heron/model/batch.h"

namespace heron::model {

// inputs: arrays whose axis `length_axis` runs over the batch's tokens (axis 0 is 1).
// `one` gets them cut to one row's tokens, that row's cache and its offset (int32 [1]),
// and returns an array laid out the same way; the rows' results are joined along the
// length axis. A single-sequence forward (a plain cache) calls it once with the inputs
// as they are.
using RowPart = std::function<mlx::core::array(const std::vector<mlx::core::array>& cut,
                                               cache::Cache& cache,
                                               const mlx::core::array& offset)>;
mlx::core::array by_row(const std::vector<mlx::core::array>& inputs, int length_axis,
                        const Batch& batch, cache::Cache& cache, const RowPart& one);

}  // namespace heron::model
