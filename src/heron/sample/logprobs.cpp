#include "heron/sample/logprobs.h"

#include <algorithm>

#include <mlx/ops.h>

namespace heron::sample {

namespace mx = mlx::core;

TokenLogprobs compute_logprobs(const mx::array& raw, const mx::array& token, int top) {
  auto logits = mx::astype(raw, mx::float32);
  auto lp = mx::subtract(logits, mx::logsumexp(logits, -1, /*keepdims=*/true));
  const int rows = logits.shape(0);
  auto chosen = mx::take_along_axis(lp, mx::reshape(token, {rows, 1}), -1);
  TokenLogprobs out{mx::reshape(chosen, {rows}), std::nullopt, std::nullopt};
  const int k = std::min(top, logits.shape(-1));
  if (k > 0) {
    // Sorting the whole vocabulary is cheap next to a forward pass, and only done when asked.
    auto order = mx::slice(mx::argsort(mx::negative(lp), -1), {0, 0}, {rows, k});
    out.top_ids = mx::astype(order, mx::int32);
    out.top_logprobs = mx::take_along_axis(lp, order, -1);
  }
  return out;
}

}  // namespace heron::sample
