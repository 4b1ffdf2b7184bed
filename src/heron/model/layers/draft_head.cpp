#include "heron/model/layers/draft_head.h"

#include <limits>
#include <string>

#include <mlx/ops.h>
#include <mlx/transforms.h>

#include "heron/cache/kv_cache.h"
#include "heron/core/error.h"
#include "heron/model/layers/rope.h"

namespace heron::model {

namespace mx = mlx::core;

namespace {

// The draft vocabulary: distinct ids of the model's vocabulary, ascending.
mx::array draft_ids(Weights& w, int vocab) {
  auto ids = w.take("d2t");
  if (ids.ndim() != 1 || ids.size() == 0 || !mx::issubdtype(ids.dtype(), mx::integer)) {
    throw Error(w.source() + ": 'd2t' must be a non-empty 1-D integer tensor");
  }
  ids = mx::astype(ids, mx::int32);
  const int n = ids.shape(0);
  auto ascending =
      n == 1 ? mx::array(true)
             : mx::all(mx::greater(mx::slice(ids, {1}, {n}), mx::slice(ids, {0}, {n - 1})));
  auto in_range = mx::logical_and(mx::all(mx::greater_equal(ids, mx::array(0))),
                                  mx::all(mx::less(ids, mx::array(vocab))));
  if (!mx::logical_and(ascending, in_range).item<bool>()) {
    throw Error(w.source() + ": 'd2t' must hold distinct ids of the model's vocabulary (0 .. " +
                std::to_string(vocab - 1) + "), ascending");
  }
  return ids;
}

}  // namespace

std::unique_ptr<DraftHead> DraftHead::load(Weights& w, const ModelConfig& c, const Model& target) {
  const auto& t = target.config();
  const auto shared = target.shared_layers();
  if (!shared) {
    throw Error(w.source() + ": a draft head shares its model's output layers, which " +
                t.architecture + " models do not offer");
  }
  if (c.hidden_size != t.hidden_size || c.vocab_size != t.vocab_size) {
    throw Error(w.source() + ": the draft head was trained for a model of hidden size " +
                std::to_string(c.hidden_size) + " and vocabulary " + std::to_string(c.vocab_size) +
                "; this model has " + std::to_string(t.hidden_size) + " and " +
                std::to_string(t.vocab_size));
  }
  const std::string layer = "layers.0";
  auto attention = Attention::load(w, layer + ".self_attn", c, std::make_shared<const Rope>(c),
                                   /*qk_norm=*/false);
  auto mlp = GatedMLP::load(w, layer + ".mlp");
  std::unique_ptr<DraftHead> head(
      new DraftHead(*shared, t.embed_scale, t.vocab_size, std::move(attention), std::move(mlp)));
  head->fc_ = Linear::load(w, "fc");
  head->input_norm_ = RMSNorm::load(w, layer + ".input_layernorm.weight", c.rms_norm_eps);
  head->post_attention_norm_ =
      RMSNorm::load(w, layer + ".post_attention_layernorm.weight", c.rms_norm_eps);
  const auto ids = draft_ids(w, t.vocab_size);
  const auto& output = shared->lm_head ? *shared->lm_head : shared->embed.table();
  head->output_ = output.rows(ids);
  head->draft_ids_ = mx::reshape(ids, {1, 1, ids.shape(0)});
  // One step now, so a head whose shapes do not fit fails here with its name, not mid-request.
  try {
    auto caches = head->make_caches();
    auto out = head->forward(mx::array({0}, {1, 1}), mx::zeros({1, 1, t.hidden_size}, w.dtype()), 0,
                             caches);
    mx::eval(out.logits);
  } catch (const std::exception& e) {
    throw Error(w.source() + ": the draft head's weights do not fit together: " + e.what());
  }
  return head;
}

Output DraftHead::forward(const mx::array& tokens, const mx::array& hiddens, int offset,
                          cache::Caches& caches) const {
  auto embedded = shared_.embed(tokens);
  if (embed_scale_ != 1.0f) {
    embedded = mx::multiply(embedded, mx::array(embed_scale_, embedded.dtype()));
  }
  auto h = fc_(mx::concatenate({embedded, mx::astype(hiddens, embedded.dtype())}, -1));
  const Batch batch{tokens, mx::array({offset}), {tokens.shape(1)}, LogitsFor::All};
  h = mx::add(h, attention_(input_norm_(h), batch, *caches[0]));
  h = mx::add(h, mlp_(post_attention_norm_(h)));
  h = shared_.norm(h);
  auto draft_logits = output_(h);
  // Over the model's vocabulary: what lies outside the draft vocabulary is never drafted.
  auto logits = mx::full({h.shape(0), h.shape(1), vocab_}, -std::numeric_limits<float>::infinity(),
                         draft_logits.dtype());
  const auto ids = mx::broadcast_to(draft_ids_, draft_logits.shape());
  return {mx::put_along_axis(logits, ids, draft_logits, -1), h};
}

cache::Caches DraftHead::make_caches() const {
  cache::Caches caches;
  caches.push_back(std::make_unique<cache::KVCache>());
  return caches;
}

}  // namespace heron::model
