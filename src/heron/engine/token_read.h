#pragma once
// Reading committed tokens and their logprobs back from the device.
#include <optional>
#include <vector>

#include <mlx/array.h>

#include "heron/engine/token_step.h"
#include "heron/sample/logprobs.h"

namespace heron::engine {

// The logprob arrays to evaluate with the tokens.
void append_logprob_arrays(const sample::TokenLogprobs& logprobs,
                           std::vector<mlx::core::array>& out);

// Rows of tokens (int32 [R]) and their logprobs, on the host.
class TokenRows {
 public:
  // Evaluates the tokens, their logprobs and `also` in one synchronization.
  TokenRows(const mlx::core::array& tokens, const std::optional<sample::TokenLogprobs>& logprobs,
            std::vector<mlx::core::array> also = {});
  TokenStep operator[](int row) const;

 private:
  std::vector<int32_t> ids_;
  std::vector<float> logprobs_;
  std::vector<int32_t> top_ids_;
  std::vector<float> top_logprobs_;
  int top_ = 0;
};

}  // namespace heron::engine
