#include "heron/model/layers/by_row.h"

#include <numeric>

#include <mlx/ops.h>

#include "heron/cache/row_caches.h"
#include "heron/core/error.h"

namespace heron::model {

namespace mx = mlx::core;

mx::array by_row(const std::vector<mx::array>& inputs, int length_axis, const Batch& batch,
                 cache::Cache& cache, const RowPart& one) {
  auto* rows = dynamic_cast<cache::RowCaches*>(&cache);
  if (rows == nullptr) return one(inputs, cache, batch.seq_offsets);
  const auto& lens = batch.query_lens;
  if (static_cast<int>(lens.size()) != rows->rows() ||
      std::accumulate(lens.begin(), lens.end(), 0) != inputs[0].shape(length_axis)) {
    throw Error("a batch has " + std::to_string(lens.size()) + " rows of " +
                std::to_string(inputs[0].shape(length_axis)) + " tokens in all but " +
                std::to_string(rows->rows()) + " caches");
  }
  std::vector<mx::array> outs;
  outs.reserve(lens.size());
  int start = 0;
  for (int r = 0; r < rows->rows(); ++r) {
    const int n = lens[static_cast<size_t>(r)];
    std::vector<mx::array> cut;
    cut.reserve(inputs.size());
    for (const auto& x : inputs) {
      auto from = mx::Shape(x.ndim(), 0);
      auto to = x.shape();
      from[length_axis] = start;
      to[length_axis] = start + n;
      cut.push_back(mx::slice(x, from, to));
    }
    outs.push_back(one(cut, rows->row(r), mx::slice(batch.seq_offsets, {r}, {r + 1})));
    start += n;
  }
  return mx::concatenate(outs, length_axis);
}

}  // namespace heron::model
