#pragma once
// The cached part of a layer in a batched forward: each row runs against its own cache,
// cut to its valid positions (rows are right-padded to the longest), so it computes
// exactly what it computes alone; the padded positions come back as zeros. The
// projections around it stay batched, which is where a batch saves its time.
#include <functional>
#include <vector>

#include <mlx/array.h>

#include "heron/cache/cache.h"
#include "heron/model/batch.h"

namespace heron::model {

// inputs: arrays whose axis 0 is the batch and axis `length_axis` the positions. `one`
// gets them cut to one row (batch 1, its length) and that row's cache, and returns an
// array laid out the same way. A single-sequence forward (a plain cache) calls it once
// with the inputs as they are.
mlx::core::array by_row(const std::vector<mlx::core::array>& inputs, int length_axis,
                        const Batch& batch, cache::Cache& cache,
                        const std::function<mlx::core::array(const std::vector<mlx::core::array>&,
                                                             cache::Cache&)>& one);

}  // namespace heron::model
