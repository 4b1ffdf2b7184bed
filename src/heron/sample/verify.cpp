#include "heron/sample/verify.h"

#include <mlx/ops.h>

#include "heron/core/error.h"
#include "heron/sample/keyed_random.h"

namespace heron::sample {

namespace mx = mlx::core;

namespace {

// Salts for the draws a position needs beside the target's own (salt 0).
constexpr uint32_t kAcceptSalt = 1;
constexpr uint32_t kResidualSalt = 2;

// The rejection rule for drafts drawn from q, all [B, N, ...]: whether each draft
// survives, and the residual draw each row would commit on rejection.
std::pair<mx::array, mx::array> reject_against(const mx::array& p, const mx::array& q,
                                               const mx::array& drafts, const mx::array& keys) {
  const int rounds = p.shape(0), n = p.shape(1), vocab = p.shape(2);
  auto ids = mx::expand_dims(drafts, -1);
  auto p_draft = mx::squeeze(mx::take_along_axis(p, ids, -1), -1);
  auto q_draft = mx::squeeze(mx::take_along_axis(q, ids, -1), -1);
  auto residual = mx::maximum(mx::subtract(p, q), mx::array(0.0f));
  // p == q leaves nothing, and then no draft is ever rejected: any row serves.
  auto empty = mx::less_equal(mx::sum(residual, -1, /*keepdims=*/true), mx::array(0.0f));
  residual = mx::log(mx::where(empty, p, residual));
  auto u = mx::reshape(keyed_uniforms(keys, 1, kAcceptSalt), {rounds, n});
  auto redraw = keyed_categorical(mx::reshape(residual, {rounds * n, vocab}), keys, kResidualSalt);
  // u < p/q, written so that q never divides.
  auto keep = mx::less(mx::multiply(u, q_draft), p_draft);
  return {keep, mx::reshape(redraw, {rounds, n})};
}

}  // namespace

Verdict verify(const Filtered& target, const mx::array& drafts,
               const std::optional<mx::array>& draft_probs, const mx::array& keys) {
  const int rounds = drafts.ndim() == 2 ? drafts.shape(0) : 0;
  const int n = drafts.ndim() == 2 ? drafts.shape(1) : 0;
  const int rows = rounds * (n + 1);
  if (n < 1 || target.logits.shape(0) != rows || keys.shape(0) != rows) {
    throw Error("speculative verification needs one target row and key more than drafts");
  }
  const int vocab = target.logits.shape(1);
  auto own = mx::reshape(target.draw(keys), {rounds, n + 1});  // the plain sampler's tokens
  auto own_drafted = mx::slice(own, {0, 0}, {rounds, n});
  mx::array keep = mx::equal(own_drafted, drafts);
  mx::array next = own;
  if (draft_probs) {
    auto p = mx::reshape(target.probs(), {rounds, n + 1, vocab});
    auto drafted_keys = mx::reshape(
        mx::slice(mx::reshape(keys, {rounds, n + 1, 2}), {0, 0, 0}, {rounds, n, 2}), {-1, 2});
    auto [survives, redraw] = reject_against(mx::slice(p, {0, 0, 0}, {rounds, n, vocab}),
                                             *draft_probs, drafts, drafted_keys);
    keep = survives;
    next = mx::concatenate({redraw, mx::slice(own, {0, n}, {rounds, n + 1})}, 1);
  }
  auto accepted = mx::sum(mx::cumprod(mx::astype(keep, mx::int32), 1), 1);
  auto columns = mx::reshape(mx::arange(n + 1, mx::int32), {1, -1});
  auto drafted = mx::concatenate({drafts, mx::zeros({rounds, 1}, mx::int32)}, 1);
  auto tokens = mx::where(mx::less(columns, mx::expand_dims(accepted, -1)), drafted, next);
  return {mx::astype(accepted, mx::int32), tokens};
}

}  // namespace heron::sample
