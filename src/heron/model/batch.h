#pragma once
// What a model consumes in one forward pass. Rows are sequences; each row has its
// own position offset so RoPE and masks work for sequences at different lengths.
#include <vector>

#include <mlx/array.h>

namespace heron::model {

enum class LogitsFor { All, Last };

struct Batch {
  mlx::core::array input_ids;    // int32 [B, L]
  mlx::core::array seq_offsets;  // int32 [B]: position of each row's first token
  std::vector<int> query_lens;   // valid tokens per row (== L while one sequence runs)
  LogitsFor logits_for = LogitsFor::All;

  // One sequence of tokens starting at `offset`.
  static Batch single(const std::vector<int>& tokens, int offset,
                      LogitsFor logits_for = LogitsFor::All);
  // One sequence whose single token is an unevaluated array (pipelined decode).
  static Batch single(const mlx::core::array& token, int offset);
};

}  // namespace heron::model
