#include "heron/model/batch.h"

#include <mlx/ops.h>

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

}  // namespace heron::model
