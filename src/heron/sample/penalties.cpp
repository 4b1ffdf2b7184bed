#include "heron/sample/penalties.h"

#include <mlx/ops.h>

namespace heron::sample {

namespace mx = mlx::core;

mx::array apply_penalties(const mx::array& logits, const mx::array& window,
                          const SamplingOptions& o) {
  auto counts = mx::scatter_add_axis(mx::zeros(logits.shape(), mx::float32), window,
                                     mx::ones(window.shape(), mx::float32), -1);
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

}  // namespace heron::sample
