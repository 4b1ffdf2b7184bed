#include "heron/engine/token_read.h"

#include <mlx/ops.h>
#include <mlx/transforms.h>

namespace heron::engine {

namespace mx = mlx::core;

namespace {

template <typename T>
std::vector<T> host_copy(const mx::array& a) {
  return {a.data<T>(), a.data<T>() + a.size()};
}

}  // namespace

void append_logprob_arrays(const sample::TokenLogprobs& logprobs, std::vector<mx::array>& out) {
  out.push_back(logprobs.logprob);
  if (logprobs.top_ids) out.insert(out.end(), {*logprobs.top_ids, *logprobs.top_logprobs});
}

TokenRows::TokenRows(const mx::array& tokens, const std::optional<sample::TokenLogprobs>& logprobs,
                     std::vector<mx::array> also) {
  // Contiguous forms (the arrays may be views), evaluated with everything else at once.
  const size_t first = also.size();
  also.push_back(mx::contiguous(tokens));
  if (logprobs) {
    std::vector<mx::array> lp;
    append_logprob_arrays(*logprobs, lp);
    for (auto& a : lp) also.push_back(mx::contiguous(a));
  }
  mx::eval(also);
  ids_ = host_copy<int32_t>(also[first]);
  if (!logprobs) return;
  logprobs_ = host_copy<float>(also[first + 1]);
  if (!logprobs->top_ids) return;
  top_ = logprobs->top_ids->shape(1);
  top_ids_ = host_copy<int32_t>(also[first + 2]);
  top_logprobs_ = host_copy<float>(also[first + 3]);
}

TokenStep TokenRows::operator[](int row) const {
  const auto r = static_cast<size_t>(row);
  TokenStep t;
  t.id = ids_.at(r);
  if (!logprobs_.empty()) t.logprob = logprobs_.at(r);
  for (size_t j = 0; j < static_cast<size_t>(top_); ++j) {
    const size_t at = r * static_cast<size_t>(top_) + j;
    t.top.emplace_back(top_ids_.at(at), top_logprobs_.at(at));
  }
  return t;
}

}  // namespace heron::engine
