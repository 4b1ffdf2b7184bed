#include "heron/kernels/sdpa_primitive.h"

#include <stdexcept>
#include <typeinfo>

#include "heron/kernels/cpu_task.h"
#include "heron/kernels/sdpa_cpu.h"

namespace heron::kernels {

namespace mx = mlx::core;

namespace {

// Pointer and (batch, head, position) strides of a 4-D input. Any strides
// work as long as the last axis is contiguous, so the KV cache's slice of its
// preallocated buffer is read in place; other layouts are gathered first.
const float* view(const mx::array& a, std::vector<float>& scratch, int64_t strides[3]) {
  if (a.strides(3) == 1) {
    for (int i = 0; i < 3; ++i) strides[i] = a.strides(i);
    return a.data<float>();
  }
  const int64_t n1 = a.shape(1), n2 = a.shape(2), n3 = a.shape(3);
  scratch.resize(a.size());
  const float* src = a.data<float>();
  float* dst = scratch.data();
  for (int64_t i0 = 0; i0 < a.shape(0); ++i0) {
    for (int64_t i1 = 0; i1 < n1; ++i1) {
      for (int64_t i2 = 0; i2 < n2; ++i2) {
        const float* row = src + i0 * a.strides(0) + i1 * a.strides(1) + i2 * a.strides(2);
        for (int64_t i3 = 0; i3 < n3; ++i3) *dst++ = row[i3 * a.strides(3)];
      }
    }
  }
  strides[0] = n1 * n2 * n3;
  strides[1] = n2 * n3;
  strides[2] = n3;
  return scratch.data();
}

// A [L, T] bool mask as a dense row-major buffer (a broadcast or sliced one is copied).
const bool* dense_mask(const mx::array& m, std::vector<char>& scratch) {
  if (m.flags().row_contiguous) return m.data<bool>();
  scratch.resize(m.size());
  const bool* src = m.data<bool>();
  for (int64_t i = 0; i < m.shape(0); ++i) {
    for (int64_t j = 0; j < m.shape(1); ++j) {
      scratch[i * m.shape(1) + j] = static_cast<char>(src[i * m.strides(0) + j * m.strides(1)]);
    }
  }
  return reinterpret_cast<const bool*>(scratch.data());
}

void run(const std::vector<mx::array>& in, mx::array& out, float scale, bool causal,
         bool key_lengths, bool sinks) {
  if (out.size() == 0) return;
  const auto &q = in[0], &k = in[1], &v = in[2];
  std::vector<float> qs, ks, vs;
  std::vector<char> ms;
  std::vector<int32_t> ls;
  std::vector<float> ss;
  SdpaArgs a{};
  a.q = view(q, qs, a.q_strides);
  a.k = view(k, ks, a.k_strides);
  a.v = view(v, vs, a.v_strides);
  a.out = out.data<float>();
  a.B = q.shape(0);
  a.Hq = q.shape(1);
  a.L = q.shape(2);
  a.D = q.shape(3);
  a.Dv = v.shape(3);
  a.Hkv = k.shape(1);
  a.T = k.shape(2);
  a.scale = scale;
  a.causal = causal;
  const bool has_fourth = in.size() > (sinks ? 4u : 3u);
  if (has_fourth && key_lengths) {
    a.key_lengths = row_major(in[3], ls);
  } else if (has_fourth) {
    a.mask = dense_mask(in[3], ms);
  }
  if (sinks) a.sinks = row_major(in.back(), ss);
  sdpa_cpu(a);
}

}  // namespace

void ScaledDotProductAttentionCpu::eval_cpu(const std::vector<mx::array>& inputs, mx::array& out) {
  run_on_cpu_stream(
      stream(), inputs, out,
      [scale = scale_, causal = causal_, lengths = key_lengths_, sinks = sinks_](
          auto& in, mx::array& result) { run(in, result, scale, causal, lengths, sinks); });
}

void ScaledDotProductAttentionCpu::eval_gpu(const std::vector<mx::array>&, mx::array&) {
  throw std::runtime_error("HeronScaledDotProductAttention is CPU-only (GPU streams use MLX's)");
}

bool ScaledDotProductAttentionCpu::is_equivalent(const mx::Primitive& other) const {
  if (typeid(other) != typeid(*this)) return false;
  const auto& o = static_cast<const ScaledDotProductAttentionCpu&>(other);
  return scale_ == o.scale_ && causal_ == o.causal_ && key_lengths_ == o.key_lengths_ &&
         sinks_ == o.sinks_;
}

std::vector<mx::Shape> ScaledDotProductAttentionCpu::output_shapes(
    const std::vector<mx::array>& inputs) {
  auto shape = inputs[0].shape();
  shape.back() = inputs[2].shape(3);  // values may be wider or narrower than keys
  return {shape};
}

}  // namespace heron::kernels
