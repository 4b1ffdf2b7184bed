// The gated delta rule: the CPU primitive (one task per batch row and value head, the
// scan's state kept in the output it ends in) and the MLX-operations reference.
#include "heron/kernels/gated_delta.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <typeinfo>

#include <mlx/ops.h>
#include <mlx/primitives.h>

#include "heron/kernels/cpu_task.h"
#include "heron/kernels/isa_choice.h"
#include "heron/kernels/thread_pool.h"
#if defined(__x86_64__)
#include "heron/kernels/avx2_exp.h"  // hsum
#endif

namespace heron::kernels {

namespace mx = mlx::core;

namespace {

IsaChoice choice;

// Below this many state multiply-adds waking the pool costs more than it saves (a decode
// step of small heads); a decode step of Qwen3-Next's 32 heads of 128 x 128 is 4 times it.
constexpr double kInlineWork = 1 << 17;

struct Dims {
  int B, T, Hk, Hv, Dk, Dv;
};

std::string shape_text(const mx::array& a) {
  std::ostringstream out;
  out << '[';
  for (size_t i = 0; i < a.ndim(); ++i) out << (i ? ", " : "") << a.shape(static_cast<int>(i));
  out << ']';
  return out.str();
}

Dims dims_of(const mx::array& q, const mx::array& v) {
  return {q.shape(0), q.shape(1), q.shape(2), v.shape(2), q.shape(3), v.shape(3)};
}

// The dimensions of consistent operands; std::invalid_argument naming the first
// inconsistency otherwise.
Dims check(const mx::array& q, const mx::array& k, const mx::array& v, const mx::array& g,
           const mx::array& beta, const mx::array& state, const std::vector<int>& keep) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("gated_delta: " + what); };
  if (q.ndim() != 4 || k.shape() != q.shape()) {
    fail("q and k must be [B, T, Hk, Dk] of one shape, got q " + shape_text(q) + ", k " +
         shape_text(k));
  }
  if (q.size() == 0) fail("empty q " + shape_text(q));
  for (const auto* x : {&q, &k, &v}) {
    if (x->dtype() != mx::float32 && x->dtype() != mx::bfloat16 && x->dtype() != mx::float16) {
      fail("q, k and v must be float32, bfloat16 or float16");
    }
  }
  if (v.ndim() != 4 || v.shape(0) != q.shape(0) || v.shape(1) != q.shape(1) || v.size() == 0) {
    fail("v must be [B, T, Hv, Dv] with q's B and T, got v " + shape_text(v) + ", q " +
         shape_text(q));
  }
  const Dims d = dims_of(q, v);
  if (d.Hv % d.Hk != 0) {
    fail("value heads (" + std::to_string(d.Hv) + ") must be a multiple of key heads (" +
         std::to_string(d.Hk) + ")");
  }
  for (const auto* gate : {&g, &beta}) {
    if (gate->shape() != mx::Shape{d.B, d.T, d.Hv} || gate->dtype() != mx::float32) {
      fail(std::string(gate == &g ? "g" : "beta") + " must be float32 [B, T, Hv] = [" +
           std::to_string(d.B) + ", " + std::to_string(d.T) + ", " + std::to_string(d.Hv) +
           "], got " + shape_text(*gate));
    }
  }
  if (state.shape() != mx::Shape{d.B, d.Hv, d.Dv, d.Dk} || state.dtype() != mx::float32) {
    fail("state must be float32 [B, Hv, Dv, Dk], got " + shape_text(state));
  }
  if (keep.empty() || keep.back() != d.T) {
    fail("keep must end with T (" + std::to_string(d.T) + ")");
  }
  for (size_t i = 0; i < keep.size(); ++i) {
    if (keep[i] < 1 || (i > 0 && keep[i] <= keep[i - 1])) {
      fail("keep must be ascending offsets in 1..T, got " + std::to_string(keep[i]) + " at index " +
           std::to_string(i));
    }
  }
  return d;
}

// One position of one task: S = g S; S += outer(beta (v - S k), k); y = S q. The state
// rows are read from src (rows src_stride apart: the input state at the first position)
// and written to dst (contiguous, Dv x Dk), which may be src.
struct Step {
  const float* src;
  int64_t src_stride;
  float* dst;
  const float* q;
  const float* k;
  const float* v;
  float* y;
  float g, beta;
  int Dk, Dv;
};

// Both implementations read S k before the decay, kv = g (S k), then write
// S' = g S + delta k with delta = beta (v - kv): the recurrence up to rounding, with one
// pass that writes the state instead of two.

// Baseline: 8 independent partial sums per dot let the compiler vectorize the loops
// without reassociating float adds; it works on a row in place (restrict), so a row of the
// input state is copied to the output first.
constexpr int kLanes = 8;

// The sum of acc[0, W) by halves: vector adds, not W dependent scalar ones.
template <int W>
float tree_sum(float* acc) {
  for (int half = W / 2; half > 0; half /= 2) {
    for (int j = 0; j < half; ++j) acc[j] += acc[j + half];
  }
  return acc[0];
}

float dot(const float* __restrict a, const float* __restrict b, int n) {
  float acc[kLanes] = {};
  int i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) acc[j] += a[i + j] * b[i + j];
  }
  for (; i < n; ++i) acc[0] += a[i] * b[i];
  return tree_sum<kLanes>(acc);
}

// row = g row + delta k, returns dot(row, q).
float update_dot(float* __restrict row, float g, const float* __restrict k, float delta,
                 const float* __restrict q, int n) {
  float acc[kLanes] = {};
  int i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      row[i + j] = row[i + j] * g + k[i + j] * delta;
      acc[j] += row[i + j] * q[i + j];
    }
  }
  for (; i < n; ++i) {
    row[i] = row[i] * g + k[i] * delta;
    acc[0] += row[i] * q[i];
  }
  return tree_sum<kLanes>(acc);
}

void step_scalar(const Step& a) {
  for (int dv = 0; dv < a.Dv; ++dv) {
    float* row = a.dst + static_cast<int64_t>(dv) * a.Dk;
    if (a.src != a.dst) {
      std::memcpy(row, a.src + dv * a.src_stride, sizeof(float) * static_cast<size_t>(a.Dk));
    }
    const float kv = a.g * dot(row, a.k, a.Dk);
    a.y[dv] = update_dot(row, a.g, a.k, (a.v[dv] - kv) * a.beta, a.q, a.Dk);
  }
}

#if defined(__x86_64__)
// AVX2: R value rows at a time, so their dots are independent chains of FMAs and share the
// loads of k and q (one row at a time waited on its own sums: 1.5x the time). The write
// pass reads the input state directly (the first position) or the rows in place.
template <int R>
HERON_AVX2 inline void rows_avx2(const Step& a, int dv0) {
  // Copied out of a: the vector stores may alias anything, so its fields would be reloaded.
  const int n = a.Dk;
  const float* k = a.k;
  const float* q = a.q;
  const float* src[R];
  float* dst[R];
  for (int r = 0; r < R; ++r) {
    src[r] = a.src + (dv0 + r) * a.src_stride;
    dst[r] = a.dst + static_cast<int64_t>(dv0 + r) * n;
  }
  // S k, two sums a row.
  __m256 acc[R][2];
  for (auto& row : acc) row[0] = row[1] = _mm256_setzero_ps();
  int i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 k0 = _mm256_loadu_ps(k + i), k1 = _mm256_loadu_ps(k + i + 8);
    for (int r = 0; r < R; ++r) {
      acc[r][0] = _mm256_fmadd_ps(_mm256_loadu_ps(src[r] + i), k0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(_mm256_loadu_ps(src[r] + i + 8), k1, acc[r][1]);
    }
  }
  for (; i + 8 <= n; i += 8) {
    const __m256 k0 = _mm256_loadu_ps(k + i);
    for (int r = 0; r < R; ++r) {
      acc[r][0] = _mm256_fmadd_ps(_mm256_loadu_ps(src[r] + i), k0, acc[r][0]);
    }
  }
  const int tail = i;
  float delta[R];
  __m256 d[R];
  for (int r = 0; r < R; ++r) {
    float kv = avx2::hsum(_mm256_add_ps(acc[r][0], acc[r][1]));
    for (int j = tail; j < n; ++j) kv += src[r][j] * k[j];
    delta[r] = (a.v[dv0 + r] - kv * a.g) * a.beta;
    d[r] = _mm256_set1_ps(delta[r]);
    acc[r][0] = _mm256_setzero_ps();
  }
  // S = g S + delta k and S q, one sum a row.
  const __m256 g = _mm256_set1_ps(a.g);
  for (i = 0; i + 8 <= n; i += 8) {
    const __m256 k0 = _mm256_loadu_ps(k + i), q0 = _mm256_loadu_ps(q + i);
    for (int r = 0; r < R; ++r) {
      const __m256 s = _mm256_fmadd_ps(k0, d[r], _mm256_mul_ps(_mm256_loadu_ps(src[r] + i), g));
      _mm256_storeu_ps(dst[r] + i, s);
      acc[r][0] = _mm256_fmadd_ps(s, q0, acc[r][0]);
    }
  }
  for (int r = 0; r < R; ++r) {
    float y = avx2::hsum(acc[r][0]);
    for (int j = tail; j < n; ++j) {
      dst[r][j] = src[r][j] * a.g + k[j] * delta[r];
      y += dst[r][j] * q[j];
    }
    a.y[dv0 + r] = y;
  }
}

HERON_AVX2 void step_avx2(const Step& a) {
  int dv = 0;
  for (; dv + 4 <= a.Dv; dv += 4) rows_avx2<4>(a, dv);
  for (; dv < a.Dv; ++dv) rows_avx2<1>(a, dv);
}
#endif

template <class T>
void to_float(const T* src, int64_t stride, int n, float* out) {
  for (int i = 0; i < n; ++i) out[i] = static_cast<float>(src[i * stride]);
}

// The n values along the last axis of a (float32, bfloat16 or float16; any strides) from element
// `offset`, as float32: in place when they already are, else converted into buf.
const float* row_of(const mx::array& a, int64_t offset, int n, float* buf) {
  const int64_t stride = a.strides(3);
  if (a.dtype() == mx::float32) {
    const float* p = a.data<float>() + offset;
    if (stride == 1) return p;
    to_float(p, stride, n, buf);
  } else if (a.dtype() == mx::bfloat16) {
    to_float(a.data<mx::bfloat16_t>() + offset, stride, n, buf);
  } else {
    to_float(a.data<mx::float16_t>() + offset, stride, n, buf);
  }
  return buf;
}

template <class T>
void from_float(const float* src, int n, T* out) {
  for (int i = 0; i < n; ++i) out[i] = static_cast<T>(src[i]);
}

// y's n values at element `offset` of the row-major output.
void store_row(const float* src, int n, mx::array& out, int64_t offset) {
  if (out.dtype() == mx::float32) {
    std::memcpy(out.data<float>() + offset, src, sizeof(float) * static_cast<size_t>(n));
  } else if (out.dtype() == mx::bfloat16) {
    from_float(src, n, out.data<mx::bfloat16_t>() + offset);
  } else {
    from_float(src, n, out.data<mx::float16_t>() + offset);
  }
}

int64_t offset3(const mx::array& a, int64_t i0, int64_t i1, int64_t i2) {
  return i0 * a.strides(0) + i1 * a.strides(1) + i2 * a.strides(2);
}

// Asks for the n values along the last axis of a from element `offset` to be cached.
void prefetch_row(const mx::array& a, int64_t offset, int n) {
  const auto* p = static_cast<const char*>(a.data<void>()) + offset * a.itemsize();
  const int64_t bytes = (n - 1) * a.strides(3) * a.itemsize();
  for (int64_t at = 0; at <= bytes; at += 64) __builtin_prefetch(p + at);
}

// The scan of batch row b, value head h over all T positions. The working state is this
// task's slice of the last kept state (after T positions); earlier kept states are copies
// of it taken on the way.
void scan(const std::vector<mx::array>& in, std::vector<mx::array>& out,
          const std::vector<int>& keep, const Dims& d, int b, int h, void (*step)(const Step&)) {
  const auto &q = in[0], &k = in[1], &v = in[2], &state = in[5];
  const float* g = in[3].data<float>();
  const float* beta = in[4].data<float>();
  const int hk = h / (d.Hv / d.Hk);
  const auto slice = static_cast<int64_t>(d.Dv) * d.Dk;
  const int64_t task = static_cast<int64_t>(b) * d.Hv + h;
  float* S = out.back().data<float>() + task * slice;

  Step a{};
  a.dst = S;
  a.Dk = d.Dk;
  a.Dv = d.Dv;
  a.src = state.data<float>() + offset3(state, b, h, 0);
  a.src_stride = state.strides(2);
  if (state.strides(3) != 1) {  // gather the rows so the kernel reads them contiguously
    for (int dv = 0; dv < d.Dv; ++dv) {
      to_float(a.src + dv * a.src_stride, state.strides(3), d.Dk, S + int64_t{dv} * d.Dk);
    }
    a.src = S;
    a.src_stride = d.Dk;
  }
  std::vector<float> buf(2 * static_cast<size_t>(d.Dk) + 2 * static_cast<size_t>(d.Dv));
  float* qb = buf.data();
  float* kb = qb + d.Dk;
  float* vb = kb + d.Dk;
  a.y = vb + d.Dv;
  size_t next_keep = 0;
  for (int t = 0; t < d.T; ++t) {
    // The next position's rows lie a whole position of heads further on, beyond what the
    // hardware prefetches, and a step waits on its k and v (5-10% of a long prefill).
    if (t + 1 < d.T) {
      prefetch_row(q, offset3(q, b, t + 1, hk), d.Dk);
      prefetch_row(k, offset3(k, b, t + 1, hk), d.Dk);
      prefetch_row(v, offset3(v, b, t + 1, h), d.Dv);
    }
    a.q = row_of(q, offset3(q, b, t, hk), d.Dk, qb);
    a.k = row_of(k, offset3(k, b, t, hk), d.Dk, kb);
    a.v = row_of(v, offset3(v, b, t, h), d.Dv, vb);
    a.g = g[offset3(in[3], b, t, h)];
    a.beta = beta[offset3(in[4], b, t, h)];
    step(a);
    a.src = S;
    a.src_stride = d.Dk;
    store_row(a.y, d.Dv, out[0], ((int64_t{b} * d.T + t) * d.Hv + h) * d.Dv);
    if (t + 1 == keep[next_keep] && next_keep + 1 < keep.size()) {
      std::memcpy(out[1 + next_keep].data<float>() + task * slice, S,
                  sizeof(float) * static_cast<size_t>(slice));
      ++next_keep;
    }
  }
}

void run(const std::vector<mx::array>& in, std::vector<mx::array>& out,
         const std::vector<int>& keep) {
  const Dims d = dims_of(in[0], in[2]);
  void (*step)(const Step&) = step_scalar;
#if defined(__x86_64__)
  if (choice.current() == Isa::Avx2) step = step_avx2;
#endif
  const int tasks = d.B * d.Hv;
  auto task = [&](int i) { scan(in, out, keep, d, i / d.Hv, i % d.Hv, step); };
  auto& pool = ThreadPool::shared();
  if (pool.size() > 1 && double(tasks) * d.T * d.Dv * d.Dk >= kInlineWork) {
    pool.parallel_for(tasks, [&](int i) { task(i); });
  } else {
    for (int i = 0; i < tasks; ++i) task(i);
  }
}

// Inputs q, k, v, g, beta, state; outputs y, then the state after each kept offset.
class GatedDeltaCpu : public mx::Primitive {
 public:
  GatedDeltaCpu(mx::Stream stream, std::vector<int> keep)
      : Primitive(stream), keep_(std::move(keep)) {}

  void eval_cpu(const std::vector<mx::array>& inputs, std::vector<mx::array>& outputs) override {
    run_on_cpu_stream(
        stream(), inputs, outputs,
        [keep = keep_](auto& in, std::vector<mx::array>& out) { run(in, out, keep); });
  }
  void eval_gpu(const std::vector<mx::array>&, std::vector<mx::array>&) override {
    throw std::runtime_error("HeronGatedDelta is CPU-only");
  }
  const char* name() const override { return "HeronGatedDelta"; }
  bool is_equivalent(const mx::Primitive& other) const override {
    return typeid(other) == typeid(*this) &&
           static_cast<const GatedDeltaCpu&>(other).keep_ == keep_;
  }
  std::vector<mx::Shape> output_shapes(const std::vector<mx::array>& inputs) override {
    std::vector<mx::Shape> shapes{inputs[2].shape()};
    shapes.resize(keep_.size() + 1, inputs[5].shape());
    return shapes;
  }

 private:
  std::vector<int> keep_;
};

}  // namespace

void set_gated_delta_isa(Isa isa) {
  choice.force(isa);
}

std::vector<mx::array> gated_delta(const mx::array& q, const mx::array& k, const mx::array& v,
                                   const mx::array& g, const mx::array& beta,
                                   const mx::array& state, const std::vector<int>& keep,
                                   mx::StreamOrDevice s) {
  check(q, k, v, g, beta, state, keep);
  const auto stream = mx::to_stream(s);
  if (stream.device != mx::Device::cpu) {
    return gated_delta_reference(q, k, v, g, beta, state, keep, s);
  }
  std::vector<mx::Shape> shapes{v.shape()};
  shapes.resize(keep.size() + 1, state.shape());
  std::vector<mx::Dtype> dtypes{v.dtype()};
  dtypes.resize(keep.size() + 1, mx::float32);
  return mx::array::make_arrays(std::move(shapes), dtypes,
                                std::make_shared<GatedDeltaCpu>(stream, keep),
                                {q, k, v, g, beta, state});
}

std::vector<mx::array> gated_delta_reference(const mx::array& q, const mx::array& k,
                                             const mx::array& v, const mx::array& g,
                                             const mx::array& beta, const mx::array& state,
                                             const std::vector<int>& keep, mx::StreamOrDevice s) {
  const Dims d = check(q, k, v, g, beta, state, keep);
  auto qh = q, kh = k;
  if (d.Hv > d.Hk) {
    qh = mx::repeat(q, d.Hv / d.Hk, 2, s);
    kh = mx::repeat(k, d.Hv / d.Hk, 2, s);
  }
  // Position t of a [B, T, ...] operand.
  auto at = [&](const mx::array& a, int t) {
    auto start = mx::Shape(a.ndim(), 0);
    auto stop = a.shape();
    start[1] = t;
    stop[1] = t + 1;
    return mx::squeeze(mx::slice(a, start, stop, s), 1, s);
  };
  std::vector<mx::array> ys, kept;
  auto S = state;
  size_t next_keep = 0;
  for (int t = 0; t < d.T; ++t) {
    const auto kt = mx::expand_dims(at(kh, t), 2, s);  // [B, Hv, 1, Dk]
    const auto qt = mx::expand_dims(at(qh, t), 2, s);
    S = mx::multiply(S, mx::expand_dims(at(g, t), {2, 3}, s), s);
    const auto kv_mem = mx::sum(mx::multiply(S, kt, s), -1, false, s);  // [B, Hv, Dv]
    const auto delta =
        mx::multiply(mx::subtract(at(v, t), kv_mem, s), mx::expand_dims(at(beta, t), 2, s), s);
    S = mx::add(S, mx::multiply(kt, mx::expand_dims(delta, 3, s), s), s);
    ys.push_back(mx::astype(mx::sum(mx::multiply(S, qt, s), -1, false, s), v.dtype(), s));
    if (t + 1 == keep[next_keep]) {
      kept.push_back(S);
      ++next_keep;
    }
  }
  kept.insert(kept.begin(), mx::stack(ys, 1, s));
  return kept;
}

}  // namespace heron::kernels
