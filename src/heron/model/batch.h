#pragma once
// What a model consumes in one forward pass: one sequence, or several packed one after
// another (continuous batching; each keeps its own caches, cache/row_caches.h), so rows
// of different lengths cost no padding. Each row has its own position offset.
#include <vector>

#include <mlx/array.h>

namespace heron::model {

enum class LogitsFor { All, Last };

struct Batch {
  mlx::core::array input_ids;    // int32 [1, N]: the rows' tokens, one row after another
  mlx::core::array seq_offsets;  // int32 [R]: position of each row's first token
  std::vector<int> query_lens;   // tokens per row, N in all
  LogitsFor logits_for = LogitsFor::All;

  // One sequence of tokens starting at `offset`.
  static Batch single(const std::vector<int>& tokens, int offset,
                      LogitsFor logits_for = LogitsFor::All);
  // One sequence whose single token is an unevaluated array (pipelined decode).
  static Batch single(const mlx::core::array& token, int offset);
  // Several sequences, packed; row r's tokens start at position offsets[r]. Logits come
  // as [1, N, vocab] (LogitsFor::All) or each row's last token's, [R, 1, vocab].
  static Batch rows(const std::vector<std::vector<int>>& tokens, const std::vector<int>& offsets,
                    LogitsFor logits_for = LogitsFor::All);
};

}  // namespace heron::model
