#include "heron/model/warmup.h"

#include <mlx/ops.h>
#include <mlx/transforms.h>

namespace heron::model {

namespace mx = mlx::core;

void warm_up(const Model& model) {
  auto caches = model.make_caches();
  // Prefill (L > 1: matrix products, causal attention) and decode (L = 1: vector
  // products, attention over the cache) take different kernels; run both.
  auto prefill = model.forward(Batch::single({1, 2}, 0, LogitsFor::Last), caches).logits;
  auto next = mx::astype(mx::argmax(prefill, -1), mx::int32);
  auto logits = model.forward(Batch::single(next, 2), caches).logits;
  // What the sampler does to logits: float32 softmax and argmax.
  auto probs = mx::softmax(mx::astype(logits, mx::float32), -1);
  mx::eval({mx::argmax(probs, -1), mx::max(probs, -1)});
  mx::synchronize();
}

}  // namespace heron::model
