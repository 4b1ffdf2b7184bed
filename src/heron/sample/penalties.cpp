#include "heron/sample/penalties.h"

#include <algorithm>

#include <mlx/ops.h>

namespace heron::sample {

namespace mx = mlx::core;

mx::array apply_penalties(const mx::array& logits, const mx::array& window,
                          const SamplingOptions& o) {
  const int rows = logits.shape(0);
  const int vocab = logits.shape(1);
  // One column more for the padding id, dropped after counting.
  auto padded = mx::scatter_add_axis(mx::zeros({rows, vocab + 1}, mx::float32), window,
                                     mx::ones(window.shape(), mx::float32), -1);
  auto counts = mx::slice(padded, {0, 0}, {rows, vocab});
  auto seen = mx::greater(counts, mx::array(0.0f));
  auto out = logits;
  if (o.repeat_penalty != 1.0f) {
    auto rp = mx::array(o.repeat_penalty);
    auto penalised =
        mx::where(mx::greater(out, mx::array(0.0f)), mx::divide(out, rp), mx::multiply(out, rp));
    out = mx::where(seen, penalised, out);
  }
  if (o.frequency_penalty != 0.0f) {
    out = mx::subtract(out, mx::multiply(counts, mx::array(o.frequency_penalty)));
  }
  if (o.presence_penalty != 0.0f) {
    out = mx::subtract(out,
                       mx::multiply(mx::astype(seen, mx::float32), mx::array(o.presence_penalty)));
  }
  return out;
}

std::optional<mx::array> penalty_windows(const std::vector<int>& history,
                                         const std::vector<int>& extension, int rows,
                                         const SamplingOptions& o, int vocab) {
  if (!o.penalties_active()) return std::nullopt;
  std::vector<int> stream = history;
  stream.insert(stream.end(), extension.begin(), extension.begin() + (rows - 1));
  const size_t longest = history.size() + static_cast<size_t>(rows - 1);
  const size_t width =
      o.repeat_last_n < 0 ? longest : std::min(longest, static_cast<size_t>(o.repeat_last_n));
  if (width == 0) return std::nullopt;
  std::vector<int32_t> ids(static_cast<size_t>(rows) * width, vocab);
  for (int r = 0; r < rows; ++r) {
    const size_t end = history.size() + static_cast<size_t>(r);
    const size_t n = std::min(width, end);
    std::copy(stream.begin() + static_cast<std::ptrdiff_t>(end - n),
              stream.begin() + static_cast<std::ptrdiff_t>(end),
              ids.begin() + static_cast<std::ptrdiff_t>(r * width));
  }
  return mx::array(ids.data(), {rows, static_cast<int>(width)}, mx::int32);
}

}  // namespace heron::sample
