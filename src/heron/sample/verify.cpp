#include "heron/sample/verify.h"

#include <mlx/ops.h>
#include <mlx/random.h>

#include "heron/core/error.h"

namespace heron::sample {

namespace mx = mlx::core;

namespace {

// Salts for the draws a position needs beside the target's own (filter.h's salt 0).
constexpr uint64_t kAcceptSalt = 1;
constexpr uint64_t kResidualSalt = 2;

// The rejection rule for drafts drawn from q: per row, whether draft i survives, and the
// residual draw each row would commit on rejection.
std::pair<mx::array, mx::array> reject_against(const mx::array& p, const mx::array& q,
                                               const mx::array& drafts, uint64_t seed,
                                               uint64_t first) {
  const int n = drafts.shape(0);
  auto ids = mx::expand_dims(drafts, -1);
  auto p_draft = mx::squeeze(mx::take_along_axis(p, ids, -1), -1);
  auto q_draft = mx::squeeze(mx::take_along_axis(q, ids, -1), -1);
  auto residual = mx::maximum(mx::subtract(p, q), mx::array(0.0f));
  // p == q leaves nothing, and then no draft is ever rejected: any row serves.
  auto empty = mx::less_equal(mx::sum(residual, -1, /*keepdims=*/true), mx::array(0.0f));
  residual = mx::log(mx::where(empty, p, residual));
  std::vector<mx::array> uniforms, redraws;
  const int vocab = p.shape(1);
  for (int i = 0; i < n; ++i) {
    const uint64_t at = first + static_cast<uint64_t>(i);
    uniforms.push_back(mx::random::uniform({1}, mx::float32, position_key(seed, at, kAcceptSalt)));
    auto row = mx::slice(residual, {i, 0}, {i + 1, vocab});
    redraws.push_back(mx::random::categorical(row, -1, position_key(seed, at, kResidualSalt)));
  }
  // u < p/q, written so that q never divides.
  auto keep = mx::less(mx::multiply(mx::concatenate(uniforms, 0), q_draft), p_draft);
  return {keep, mx::astype(mx::concatenate(redraws, 0), mx::int32)};
}

}  // namespace

Verdict verify(const Filtered& target, const std::vector<int>& drafts,
               const std::optional<mx::array>& draft_probs, uint64_t seed,
               uint64_t first_position) {
  const int n = static_cast<int>(drafts.size());
  if (n < 1 || target.logits.shape(0) != n + 1) {
    throw Error("speculative verification needs one target row more than drafts");
  }
  auto d = mx::array(drafts.data(), {n}, mx::int32);
  auto own = target.draw(seed, first_position);  // the plain sampler's token at each row
  auto own_drafted = mx::slice(own, {0}, {n});
  mx::array keep = mx::equal(own_drafted, d);
  mx::array next = own;
  if (draft_probs) {
    auto p = target.probs();
    auto [survives, redraw] = reject_against(mx::slice(p, {0, 0}, {n, p.shape(1)}), *draft_probs, d,
                                             seed, first_position);
    keep = survives;
    next = mx::concatenate({redraw, mx::slice(own, {n}, {n + 1})}, 0);
  }
  auto accepted = mx::sum(mx::cumprod(mx::astype(keep, mx::int32), 0));
  auto rows = mx::arange(n + 1, mx::int32);
  auto drafted = mx::concatenate({d, mx::zeros({1}, mx::int32)}, 0);
  auto tokens = mx::where(mx::less(rows, accepted), drafted, next);
  return {mx::astype(accepted, mx::int32), tokens};
}

}  // namespace heron::sample
