#include "heron/sample/filter.h"

#include <limits>

#include <mlx/ops.h>

#include "heron/sample/keyed_random.h"
#include "heron/sample/penalties.h"

namespace heron::sample {

namespace mx = mlx::core;

Filtered filter_rows(mx::array logits, const SamplingOptions& options,
                     const std::optional<mx::array>& windows) {
  if (options.penalties_active() && windows) logits = apply_penalties(logits, *windows, options);
  if (options.temperature == 0.0f) return {logits, std::nullopt, true};
  const auto neg_inf = mx::array(-std::numeric_limits<float>::infinity());
  const int rows = logits.shape(0);
  const int vocab = logits.shape(-1);
  if (options.top_k > 0 && options.top_k < vocab) {
    auto kth = mx::min(mx::topk(logits, options.top_k, -1), -1, /*keepdims=*/true);
    logits = mx::where(mx::less(logits, kth), neg_inf, logits);
  }
  logits = mx::multiply(logits, mx::array(1.0f / options.temperature));
  if (options.top_p >= 1.0f && options.min_p <= 0.0f) return {logits, std::nullopt, false};
  // Filter in descending order: the most likely token is always kept by both filters.
  auto order = mx::argsort(mx::negative(logits), -1);
  auto sorted = mx::take_along_axis(logits, order, -1);
  auto probs = mx::softmax(sorted, -1, /*precise=*/true);
  if (options.top_p < 1.0f) {
    // Nucleus: keep the most likely tokens whose mass before them is below top_p.
    auto mass_before = mx::subtract(mx::cumsum(probs, -1), probs);
    sorted = mx::where(mx::less(mass_before, mx::array(options.top_p)), sorted, neg_inf);
  }
  if (options.min_p > 0.0f) {
    auto floor = mx::multiply(mx::slice(probs, {0, 0}, {rows, 1}), mx::array(options.min_p));
    sorted = mx::where(mx::less(probs, floor), neg_inf, sorted);
  }
  return {sorted, mx::astype(order, mx::int32), false};
}

mx::array Filtered::draw(const mx::array& keys) const {
  if (greedy) return mx::astype(mx::argmax(logits, -1), mx::int32);
  auto pick = keyed_categorical(logits, keys, /*salt=*/0);  // renormalizes what each row kept
  if (!order) return pick;
  auto token = mx::take_along_axis(*order, mx::expand_dims(pick, -1), -1);
  return mx::astype(mx::squeeze(token, -1), mx::int32);
}

mx::array Filtered::probs() const {
  if (greedy) {
    auto best = mx::expand_dims(mx::argmax(logits, -1), -1);
    auto columns = mx::arange(logits.shape(1), mx::uint32);
    return mx::astype(mx::equal(columns, best), mx::float32);
  }
  auto p = mx::softmax(logits, -1, /*precise=*/true);
  if (!order) return p;
  return mx::put_along_axis(mx::zeros_like(p), *order, p, -1);
}

}  // namespace heron::sample
