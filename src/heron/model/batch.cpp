#include "heron/model/batch.h"

#include <algorithm>

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
  size_t longest = 0;
  for (const auto& row : tokens) {
    if (row.empty()) throw Error("a batch's row has no tokens");
    longest = std::max(longest, row.size());
  }
  std::vector<int> ids(tokens.size() * longest, 0);
  std::vector<int> lens;
  for (size_t r = 0; r < tokens.size(); ++r) {
    std::copy(tokens[r].begin(), tokens[r].end(), ids.begin() + static_cast<long>(r * longest));
    lens.push_back(static_cast<int>(tokens[r].size()));
  }
  const auto B = static_cast<int>(tokens.size());
  return Batch{mx::array(ids.data(), {B, static_cast<int>(longest)}, mx::int32),
               mx::array(offsets.data(), {B}, mx::int32), std::move(lens), logits_for};
}

bool Batch::uniform() const {
  const int L = input_ids.shape(1);
  return std::all_of(query_lens.begin(), query_lens.end(), [L](int n) { return n == L; });
}

}  // namespace heron::model
