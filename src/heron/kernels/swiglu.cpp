#include "heron/kernels/swiglu.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <stdexcept>
#include <typeinfo>

#include <mlx/compile.h>
#include <mlx/ops.h>
#include <mlx/primitives.h>

#include "heron/kernels/avx2_exp.h"
#include "heron/kernels/cpu_task.h"
#include "heron/kernels/isa_choice.h"
#include "heron/kernels/thread_pool.h"

namespace heron::kernels {

namespace mx = mlx::core;

namespace {

constexpr int64_t kChunk = 16384;  // values per task

IsaChoice choice;

std::vector<mx::array> swiglu_ops(const std::vector<mx::array>& in) {
  const auto& g = in[0];
  return {mx::multiply(mx::multiply(g, mx::sigmoid(g)), in[1])};
}

const auto compiled_swiglu = mx::compile(swiglu_ops, /*shapeless=*/true);

// silu(g) = g / (1 + e^-g) = g e^g / (1 + e^g): with t = e^-|g|, the first form for
// g >= 0 and the second below, so t never overflows and silu(g) tends to 0 as it should
// (a clamped e^-g would leave g / e^88 far below -88).
void swiglu_scalar(const float* g, const float* u, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float t = std::exp(-std::abs(g[i]));
    out[i] = (g[i] >= 0 ? g[i] : g[i] * t) / (1.0f + t) * u[i];
  }
}

#if defined(__x86_64__)
HERON_AVX2 void swiglu_avx2(const float* g, const float* u, float* out, int64_t n) {
  int64_t i = 0;
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 sign = _mm256_set1_ps(-0.0f);
  for (; i + 8 <= n; i += 8) {
    const __m256 gv = _mm256_loadu_ps(g + i);
    const __m256 t = avx2::exp(_mm256_or_ps(gv, sign));  // e^-|g|, 0 below -87
    const __m256 negative = _mm256_cmp_ps(gv, _mm256_setzero_ps(), _CMP_LT_OQ);
    const __m256 top = _mm256_blendv_ps(gv, _mm256_mul_ps(gv, t), negative);
    const __m256 silu = _mm256_div_ps(top, _mm256_add_ps(one, t));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(silu, _mm256_loadu_ps(u + i)));
  }
  swiglu_scalar(g + i, u + i, out + i, n - i);
}
#endif

// Where an operand's rows of `n` values lie: each row contiguous, rows `stride` apart
// (a slice of a wider last axis), or nothing when its layout is anything else.
std::optional<int64_t> row_stride(const mx::array& a, int64_t n) {
  if (a.ndim() == 0 || a.strides().back() != 1) return std::nullopt;
  std::optional<int64_t> stride;
  int64_t expected = 0;  // the stride the next outer axis must have
  for (int d = static_cast<int>(a.ndim()) - 2; d >= 0; --d) {
    if (a.shape(d) == 1) continue;
    const auto s = static_cast<int64_t>(a.strides(d));
    if (!stride) {
      stride = s;
    } else if (s != expected) {
      return std::nullopt;
    }
    expected = s * a.shape(d);
  }
  return stride.value_or(n);
}

// One operand as rows: where they lie without a copy, else gathered into scratch.
struct Rows {
  const float* data;
  int64_t stride;
};

Rows rows_of(const mx::array& a, int64_t n, std::vector<float>& scratch) {
  if (auto stride = row_stride(a, n)) return {a.data<float>(), *stride};
  return {row_major(a, scratch), n};
}

void swiglu_rows(Rows g, Rows u, float* out, int64_t rows, int64_t n) {
  const int64_t total = rows * n;
  const int tasks = static_cast<int>((total + kChunk - 1) / kChunk);
  const bool avx2 = choice.current() == Isa::Avx2;
  ThreadPool::shared().parallel_for(tasks, [&](int t) {
    const int64_t end = std::min(total, (t + 1) * kChunk);
    for (int64_t at = t * kChunk; at < end;) {
      const int64_t r = at / n, c = at % n, count = std::min(n - c, end - at);
      const float* gp = g.data + r * g.stride + c;
      const float* up = u.data + r * u.stride + c;
#if defined(__x86_64__)
      if (avx2) {
        swiglu_avx2(gp, up, out + at, count);
        at += count;
        continue;
      }
#endif
      swiglu_scalar(gp, up, out + at, count);
      at += count;
    }
  });
}

class SwigluCpu : public mx::UnaryPrimitive {
 public:
  explicit SwigluCpu(mx::Stream stream) : UnaryPrimitive(stream) {}

  void eval_cpu(const std::vector<mx::array>& inputs, mx::array& out) override {
    run_on_cpu_stream(stream(), inputs, out, [](auto& in, mx::array& result) {
      const int64_t n = in[0].shape(-1);
      const int64_t rows = n == 0 ? 0 : static_cast<int64_t>(in[0].size()) / n;
      std::vector<float> g_scratch, u_scratch;
      swiglu_rows(rows_of(in[0], n, g_scratch), rows_of(in[1], n, u_scratch), result.data<float>(),
                  rows, n);
    });
  }
  void eval_gpu(const std::vector<mx::array>&, mx::array&) override {
    throw std::runtime_error("HeronSwiglu is CPU-only");
  }
  const char* name() const override { return "HeronSwiglu"; }
  bool is_equivalent(const mx::Primitive& other) const override {
    return typeid(other) == typeid(*this);
  }
  std::vector<mx::Shape> output_shapes(const std::vector<mx::array>& inputs) override {
    return {inputs[0].shape()};
  }
};

}  // namespace

void set_swiglu_isa(Isa isa) {
  choice.force(isa);
}

mx::array swiglu(const mx::array& gate, const mx::array& up, mx::StreamOrDevice s) {
  const auto stream = mx::to_stream(s);
  if (stream.device != mx::Device::cpu || gate.dtype() != mx::float32 ||
      up.dtype() != mx::float32 || gate.shape() != up.shape() || gate.ndim() == 0) {
    return compiled_swiglu({gate, up})[0];
  }
  return mx::array(gate.shape(), mx::float32, std::make_shared<SwigluCpu>(stream), {gate, up});
}

}  // namespace heron::kernels
