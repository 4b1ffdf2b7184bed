#include "heron/model/layers/by_row.h"

#include <mlx/ops.h>

#include "heron/cache/row_caches.h"
#include "heron/core/error.h"

namespace heron::model {

namespace mx = mlx::core;

mx::array by_row(
    const std::vector<mx::array>& inputs, int length_axis, const Batch& batch, cache::Cache& cache,
    const std::function<mx::array(const std::vector<mx::array>&, cache::Cache&)>& one) {
  auto* rows = dynamic_cast<cache::RowCaches*>(&cache);
  if (rows == nullptr) return one(inputs, cache);
  if (static_cast<int>(batch.query_lens.size()) != rows->rows()) {
    throw Error("a batch has " + std::to_string(batch.query_lens.size()) + " rows but " +
                std::to_string(rows->rows()) + " caches");
  }
  std::vector<mx::array> outs;
  outs.reserve(batch.query_lens.size());
  for (int r = 0; r < rows->rows(); ++r) {
    const int n = batch.query_lens[static_cast<size_t>(r)];
    std::vector<mx::array> cut;
    cut.reserve(inputs.size());
    for (const auto& x : inputs) {
      auto stop = x.shape();
      stop[0] = r + 1;
      stop[length_axis] = n;
      auto start = mx::Shape(x.ndim(), 0);
      start[0] = r;
      cut.push_back(mx::slice(x, start, stop));
    }
    auto out = one(cut, rows->row(r));
    const int length = inputs[0].shape(length_axis);
    if (n < length) {
      auto pad = out.shape();
      pad[length_axis] = length - n;
      out = mx::concatenate({out, mx::zeros(pad, out.dtype())}, length_axis);
    }
    outs.push_back(std::move(out));
  }
  return mx::concatenate(outs, 0);
}

}  // namespace heron::model
