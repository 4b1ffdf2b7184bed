#include "heron/model/batch.h"

#include <mlx/ops.h>

#include "heron/core/error.h"

namespace heron::model {

namespace mx = mlx::core;

Batch Batch::single(const std::vector<int>& tokens, int offset, LogitsFor logits_for) {
  auto n = static_cast<int>(tokens.size());
  return Batch{mx::array(tokens.data(), {1, n}, mx::int32), mx::array({offset}), {n}, logits_for};
}

Batch Batch::single(const mx::array& token, int offset) {
  return Batch{
      mx::reshape(mx::astype(token, mx::int32), {1, 1}), mx::array({offset}), {1}, LogitsFor::All};
}

Batch Batch::rows(const std::vector<std::vector<int>>& tokens, const std::vector<int>& offsets,
                  LogitsFor logits_for) {
  if (tokens.empty() || tokens.size() != offsets.size()) {
    throw Error("a batch needs one offset for each of its rows, and at least one row");
  }
  std::vector<int> ids;
  std::vector<int> lens;
  for (const auto& row : tokens) {
    if (row.empty()) throw Error("a batch's row has no tokens");
    ids.insert(ids.end(), row.begin(), row.end());
    lens.push_back(static_cast<int>(row.size()));
  }
  const auto R = static_cast<int>(tokens.size());
  return Batch{mx::array(ids.data(), {1, static_cast<int>(ids.size())}, mx::int32),
               mx::array(offsets.data(), {R}, mx::int32), std::move(lens), logits_for};
}

}  // namespace heron::model
