#include "heron/model/warmup.h"

#include <algorithm>

#include <mlx/ops.h>
#include <mlx/transforms.h>

namespace heron::model {

namespace mx = mlx::core;

void warm_up(const Model& model) {
  auto caches = model.make_caches();
  // Prefill (matrix products, causal attention) and decode (vector products, attention
  // over the cache) take different kernels; run both. Quantized matrix products pick
  // their kernel by row count, so the prefill is as long as a typical prompt.
  const int prompt = std::max(1, std::min(256, model.config().max_position_embeddings - 1));
  auto prefill =
      model.forward(Batch::single(std::vector<int>(prompt, 1), 0, LogitsFor::Last), caches).logits;
  auto next = mx::astype(mx::argmax(prefill, -1), mx::int32);
  auto logits = model.forward(Batch::single(next, prompt), caches).logits;
  // What the sampler does to logits: float32 softmax and argmax.
  auto probs = mx::softmax(mx::astype(logits, mx::float32), -1);
  mx::eval({mx::argmax(probs, -1), mx::max(probs, -1)});
  mx::synchronize();
}

}  // namespace heron::model
