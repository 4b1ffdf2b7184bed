#include "heron/kernels/gelu.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <typeinfo>

#include <mlx/ops.h>
#include <mlx/primitives.h>

#include "heron/kernels/avx2_exp.h"
#include "heron/kernels/cpu_task.h"
#include "heron/kernels/isa_choice.h"
#include "heron/kernels/thread_pool.h"

namespace heron::kernels {

namespace mx = mlx::core;

namespace {

constexpr float kInvSqrt2 = 0.70710678118654752f;
constexpr int64_t kChunk = 16384;  // values per task

IsaChoice choice;

void gelu_scalar(const float* x, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * kInvSqrt2));
}

#if defined(__x86_64__)
// erf(z) = 1 - poly(t) e^(-z^2), t = 1 / (1 + p |z|), with erf's odd symmetry.
HERON_AVX2 __m256 erf8(__m256 z) {
  const __m256 sign = _mm256_and_ps(z, _mm256_set1_ps(-0.0f));
  const __m256 a = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), z);
  const __m256 t = _mm256_div_ps(
      _mm256_set1_ps(1.0f), _mm256_fmadd_ps(a, _mm256_set1_ps(0.3275911f), _mm256_set1_ps(1.0f)));
  __m256 poly = _mm256_set1_ps(1.061405429f);
  poly = _mm256_fmadd_ps(poly, t, _mm256_set1_ps(-1.453152027f));
  poly = _mm256_fmadd_ps(poly, t, _mm256_set1_ps(1.421413741f));
  poly = _mm256_fmadd_ps(poly, t, _mm256_set1_ps(-0.284496736f));
  poly = _mm256_fmadd_ps(poly, t, _mm256_set1_ps(0.254829592f));
  poly = _mm256_mul_ps(poly, t);
  const __m256 e = avx2::exp(_mm256_mul_ps(_mm256_mul_ps(a, a), _mm256_set1_ps(-1.0f)));
  const __m256 r = _mm256_fnmadd_ps(poly, e, _mm256_set1_ps(1.0f));
  return _mm256_or_ps(r, sign);
}

HERON_AVX2 void gelu_avx2(const float* x, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256 e = erf8(_mm256_mul_ps(v, _mm256_set1_ps(kInvSqrt2)));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), v),
                                            _mm256_add_ps(_mm256_set1_ps(1.0f), e)));
  }
  gelu_scalar(x + i, out + i, n - i);
}
#endif

void gelu_all(const float* x, float* out, int64_t n) {
  const int tasks = static_cast<int>((n + kChunk - 1) / kChunk);
  const bool avx2 = choice.current() == Isa::Avx2;
  ThreadPool::shared().parallel_for(tasks, [&](int t) {
    const int64_t begin = t * kChunk, count = std::min(kChunk, n - begin);
#if defined(__x86_64__)
    if (avx2) return gelu_avx2(x + begin, out + begin, count);
#endif
    gelu_scalar(x + begin, out + begin, count);
  });
}

class GeluErfCpu : public mx::UnaryPrimitive {
 public:
  explicit GeluErfCpu(mx::Stream stream) : UnaryPrimitive(stream) {}

  void eval_cpu(const std::vector<mx::array>& inputs, mx::array& out) override {
    run_on_cpu_stream(stream(), inputs, out, [](auto& in, mx::array& result) {
      std::vector<float> scratch;
      gelu_all(row_major(in[0], scratch), result.data<float>(), static_cast<int64_t>(in[0].size()));
    });
  }
  void eval_gpu(const std::vector<mx::array>&, mx::array&) override {
    throw std::runtime_error("HeronGeluErf is CPU-only");
  }
  const char* name() const override { return "HeronGeluErf"; }
  bool is_equivalent(const mx::Primitive& other) const override {
    return typeid(other) == typeid(*this);
  }
  std::vector<mx::Shape> output_shapes(const std::vector<mx::array>& inputs) override {
    return {inputs[0].shape()};
  }
};

}  // namespace

void set_gelu_isa(Isa isa) {
  choice.force(isa);
}

mx::array gelu_erf(const mx::array& x, mx::StreamOrDevice s) {
  const auto stream = mx::to_stream(s);
  if (stream.device != mx::Device::cpu || x.dtype() != mx::float32) {
    const auto half = mx::array(0.5f, x.dtype());
    const auto inv_sqrt2 = mx::array(kInvSqrt2, x.dtype());
    return mx::multiply(
        mx::multiply(half, x, s),
        mx::add(mx::array(1.0f, x.dtype()), mx::erf(mx::multiply(x, inv_sqrt2, s), s), s), s);
  }
  return mx::array(x.shape(), mx::float32, std::make_shared<GeluErfCpu>(stream), {x});
}

}  // namespace heron::kernels
