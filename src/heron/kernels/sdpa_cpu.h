#pragma once
// CPU scaled dot-product attention on raw float32 buffers, with the semantics
// of mx::fast::scaled_dot_product_attention: out = softmax(scale * q k^T) v
// per head, query head h reading kv head h / (Hq / Hkv), and the causal mask
// aligned to the end of the keys (query i sees keys j <= T - L + i; causal
// needs L <= T), or a boolean mask [L, T] shared by every batch row and head (query i
// sees key j where it is true: a sliding window's ring, whose keys are not in position
// order), or per batch row a number of real keys. Every query must see at least one key.
#include <cstdint>

#include "heron/kernels/qmm_cpu.h"  // Isa

namespace heron::kernels {

struct SdpaArgs {
  // Strides in elements for the batch, head and position axes; the last
  // (head_dim) axis is contiguous. Keys/values may be a slice of a larger
  // cache buffer, so their position stride need not equal D.
  const float* q;  // [B, Hq, L, D]
  const float* k;  // [B, Hkv, T, D]
  const float* v;  // [B, Hkv, T, Dv]
  float* out;      // [B, Hq, L, Dv], row-major
  int64_t q_strides[3], k_strides[3], v_strides[3];
  int B, Hq, Hkv, L, T, D, Dv;  // D and Dv multiples of 8 (Dv: latent attention's own width)
  float scale;
  bool causal;
  const bool* mask = nullptr;  // [L, T] row-major, or none
  // [B], or none: batch row b's keys are right-padded, and only j < key_lengths[b] are real
  // (a batch of texts of different lengths; not with causal).
  const int32_t* key_lengths = nullptr;
  // [Hq], or none: head h's attention sink, a logit (not scaled) that joins each of its
  // rows' softmax and adds no value, so a row may attend to nothing (gpt-oss).
  const float* sinks = nullptr;
};

// Runs on the calling thread plus the shared thread pool.
void sdpa_cpu(const SdpaArgs& a);

// For tests and benchmarks: force an implementation (Auto: best supported).
void set_sdpa_isa(Isa isa);
Isa sdpa_isa();

}  // namespace heron::kernels
