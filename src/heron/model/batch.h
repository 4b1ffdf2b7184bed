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
  std::vector<int> query_lens;   // valid tokens per row; rows are right-padded to L
  LogitsFor logits_for = LogitsFor::All;

  // One sequence of tokens starting at `offset`.
  static Batch single(const std::vector<int>& tokens, int offset,
                      LogitsFor logits_for = LogitsFor::All);
  // One sequence whose single token is an unevaluated array (pipelined decode).
  static Batch single(const mlx::core::array& token, int offset);
  // Several sequences, one per row (each with its own caches: cache/row_caches.h), right-
  // padded to the longest; row r's tokens start at offsets[r]. LogitsFor::Last gives each
  // row's last token's.
  static Batch rows(const std::vector<std::vector<int>>& tokens, const std::vector<int>& offsets,
                    LogitsFor logits_for = LogitsFor::All);
  // Whether every row has L valid tokens.
  bool uniform() const;
};

}  // namespace heron::model
