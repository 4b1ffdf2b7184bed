#pragma once
// Per-ISA inner loop behind sdpa_cpu (internal to src/heron/kernels).
#include <cstdint>

namespace heron::kernels {

// Online softmax of M query rows over keys [k0, k1) of one kv head. Row r
// sees only keys j < end[r], and with a mask only those where mask[r][j] is true. m, l and acc
// carry the running max, the running sum of exponentials and the unnormalised output between calls:
// start them at -inf, 0 and 0; the row's result is acc / l.
struct AttendArgs {
  const float* q;  // [M, D], already multiplied by the softmax scale
  const float* k;  // key j at k + j * k_stride
  const float* v;  // value j at v + j * v_stride
  int64_t k_stride, v_stride;
  const int* end;           // [M]
  const bool* const* mask;  // [M] rows of T flags, or nullptr: every key below end
  int M, D, Dv, k0, k1;     // D: query/key width; Dv: value width
  float* m;    // [M]
  float* l;    // [M]
  float* acc;  // [M, Dv]
};

void attend_scalar(const AttendArgs& a);
void attend_avx2(const AttendArgs& a);

}  // namespace heron::kernels
