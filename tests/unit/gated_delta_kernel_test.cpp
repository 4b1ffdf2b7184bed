// heron::kernels::gated_delta (the CPU primitive, both implementations) against
// gated_delta_reference (MLX operations a position at a time, as mlx-lm's gated_delta_ops),
// and both against a case worked by hand: outputs and kept states over decode and prefill
// shapes, grouped heads, 16-bit inputs, strided operands, a scan cut in two, and the
// operands they reject.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include <mlx/ops.h>
#include <mlx/primitives.h>
#include <mlx/random.h>
#include <mlx/transforms.h>

#include "cpu_isa_test.h"

#include "heron/kernels/gated_delta.h"

namespace {

namespace mx = mlx::core;
using heron::kernels::gated_delta;
using heron::kernels::gated_delta_reference;

struct Shape {
  int B, T, Hk, Hv, Dk, Dv;
  std::string text() const {
    return "B " + std::to_string(B) + " T " + std::to_string(T) + " Hk " + std::to_string(Hk) +
           " Hv " + std::to_string(Hv) + " Dk " + std::to_string(Dk) + " Dv " + std::to_string(Dv);
  }
};

struct Operands {
  mx::array q, k, v, g, beta, state;
};

// Operands as a Qwen3-Next layer hands them over: q, k L2-normalized with q scaled by
// Dk^-1/2 (mlx-lm's normalize_qk), g = exp(-softplus(a)) mostly near 1, beta a sigmoid, and
// a nonzero starting state. q, k and v in `dtype`.
Operands make_operands(const Shape& s, mx::Dtype dtype, uint64_t seed) {
  auto normal = [&](const mx::Shape& shape) {
    return mx::random::normal(shape, mx::float32, mx::random::key(seed++));
  };
  auto unit = [](const mx::array& x) {
    return mx::multiply(x, mx::rsqrt(mx::sum(mx::square(x), -1, true)));
  };
  const auto q = mx::multiply(unit(normal({s.B, s.T, s.Hk, s.Dk})),
                              mx::array(1.0f / std::sqrt(static_cast<float>(s.Dk))));
  const auto k = unit(normal({s.B, s.T, s.Hk, s.Dk}));
  const auto v = normal({s.B, s.T, s.Hv, s.Dv});
  const auto a =
      mx::subtract(mx::multiply(normal({s.B, s.T, s.Hv}), mx::array(2.0f)), mx::array(2.0f));
  const auto g = mx::exp(mx::negative(mx::logaddexp(a, mx::array(0.0f))));
  const auto beta = mx::sigmoid(normal({s.B, s.T, s.Hv}));
  const auto state = mx::multiply(normal({s.B, s.Hv, s.Dv, s.Dk}), mx::array(0.5f));
  Operands o{mx::astype(q, dtype), mx::astype(k, dtype), mx::astype(v, dtype), g, beta, state};
  mx::eval({o.q, o.k, o.v, o.g, o.beta, o.state});
  return o;
}

std::vector<mx::array> run(const Operands& o, const std::vector<int>& keep, bool reference) {
  auto out = reference ? gated_delta_reference(o.q, o.k, o.v, o.g, o.beta, o.state, keep)
                       : gated_delta(o.q, o.k, o.v, o.g, o.beta, o.state, keep);
  mx::eval(out);
  return out;
}

// max |ours - ref| / max |ref|.
float relative_error(const mx::array& ours, const mx::array& ref) {
  const auto a = mx::astype(ours, mx::float32), b = mx::astype(ref, mx::float32);
  return mx::divide(mx::max(mx::abs(mx::subtract(a, b))), mx::max(mx::abs(b))).item<float>();
}

// The kernel's outputs against the reference's: same shapes and dtypes, y within y_tol and
// the kept states within state_tol.
void expect_matches(const std::vector<mx::array>& ours, const std::vector<mx::array>& ref,
                    float y_tol, float state_tol) {
  ASSERT_EQ(ours.size(), ref.size());
  for (size_t i = 0; i < ours.size(); ++i) {
    SCOPED_TRACE(i == 0 ? std::string("y") : "kept state " + std::to_string(i - 1));
    EXPECT_EQ(ours[i].shape(), ref[i].shape());
    EXPECT_EQ(ours[i].dtype(), ref[i].dtype());
    EXPECT_LE(relative_error(ours[i], ref[i]), i == 0 ? y_tol : state_tol);
  }
}

void expect_identical(const std::vector<mx::array>& a, const std::vector<mx::array>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(mx::array_equal(a[i], b[i]).item<bool>()) << "output " << i;
  }
}

// Decode (T 1) and prefill; one key head for all value heads, for some or each; Dk through
// the AVX2 kernel's 16- and 8-lane blocks and its scalar tail (128, 32, 16; 24 = 16 + 8;
// 20 = 16 + 4; 4) and Dv through its groups of 4 rows and the rows left over (13, 3);
// work small enough to run inline and large enough for the thread pool.
const Shape kShapes[] = {
    {1, 1, 1, 2, 16, 8},   {1, 1, 2, 4, 128, 32},  {2, 1, 1, 6, 24, 48}, {1, 5, 2, 6, 32, 8},
    {2, 5, 1, 2, 20, 13},  {1, 5, 2, 2, 128, 128}, {1, 5, 1, 1, 4, 3},   {1, 64, 2, 4, 128, 48},
    {2, 64, 1, 6, 16, 32}, {2, 64, 2, 4, 24, 32},
};

std::vector<std::vector<int>> keeps_for(int T) {
  if (T < 4) return {{T}};
  return {{T}, {1, 3, T}, {T / 2, T - 1, T}};
}

class GatedDeltaKernel : public CpuIsaTest<heron::kernels::set_gated_delta_isa> {};

TEST_P(GatedDeltaKernel, MatchesReference) {
  uint64_t seed = 1;
  for (const auto& shape : kShapes) {
    const auto o = make_operands(shape, mx::float32, seed += 10);
    for (const auto& keep : keeps_for(shape.T)) {
      SCOPED_TRACE(shape.text() + ", " + std::to_string(keep.size()) + " kept");
      EXPECT_STREQ(gated_delta(o.q, o.k, o.v, o.g, o.beta, o.state, keep)[0].primitive().name(),
                   "HeronGatedDelta");
      expect_matches(run(o, keep, false), run(o, keep, true), 1e-5f, 1e-5f);
    }
  }
}

// 16-bit q, k and v convert exactly to float32, so the states agree as closely as float32
// ones; y is rounded to v's type, where the two may round a value to neighbours.
TEST_P(GatedDeltaKernel, SixteenBitInputsMatchReference) {
  uint64_t seed = 200;
  for (const auto dtype : {mx::bfloat16, mx::float16}) {
    for (const auto& shape : {kShapes[1], kShapes[4], kShapes[7]}) {
      SCOPED_TRACE(shape.text() + (dtype == mx::bfloat16 ? ", bfloat16" : ", float16"));
      const auto o = make_operands(shape, dtype, seed += 10);
      const auto keep = shape.T > 1 ? std::vector<int>{1, shape.T} : std::vector<int>{1};
      const float unit = dtype == mx::bfloat16 ? 1.0f / 128 : 1.0f / 1024;
      expect_matches(run(o, keep, false), run(o, keep, true), unit, 1e-5f);
    }
  }
}

// Transposed q, k read with a stride along Dk, a broadcast v, g and beta sliced from wider
// arrays, a transposed state: the same bits as from their contiguous copies.
TEST_P(GatedDeltaKernel, ReadsStridedOperands) {
  const Shape s{2, 5, 2, 4, 32, 16};
  const auto dense = make_operands(s, mx::float32, 300);
  Operands strided = dense;
  strided.q = mx::swapaxes(mx::contiguous(mx::swapaxes(dense.q, 1, 2)), 1, 2);
  const auto wide_k = mx::repeat(dense.k, 2, 3);  // every value twice along Dk
  strided.k = mx::slice(wide_k, {0, 0, 0, 0}, wide_k.shape(), {1, 1, 1, 2});
  const auto v_row = mx::random::normal({1, 1, s.Hv, s.Dv}, mx::float32, mx::random::key(301));
  strided.v = mx::broadcast_to(v_row, {s.B, s.T, s.Hv, s.Dv});
  strided.g = mx::slice(mx::concatenate({dense.g, dense.g}, 2), {0, 0, 1}, {s.B, s.T, s.Hv + 1});
  strided.beta =
      mx::slice(mx::concatenate({dense.beta, dense.beta}, 1), {0, s.T, 0}, {s.B, 2 * s.T, s.Hv});
  strided.state = mx::swapaxes(mx::contiguous(mx::swapaxes(dense.state, 2, 3)), 2, 3);
  mx::eval({strided.q, strided.k, strided.v, strided.g, strided.beta, strided.state});
  EXPECT_FALSE(strided.q.flags().row_contiguous);
  EXPECT_NE(strided.k.strides(3), 1);
  EXPECT_NE(strided.state.strides(3), 1);
  EXPECT_FALSE(strided.g.flags().row_contiguous);
  EXPECT_FALSE(strided.beta.flags().row_contiguous);

  Operands copies{mx::contiguous(strided.q),    mx::contiguous(strided.k),
                  mx::contiguous(strided.v),    mx::contiguous(strided.g),
                  mx::contiguous(strided.beta), mx::contiguous(strided.state)};
  const std::vector<int> keep{2, s.T};
  const auto ours = run(strided, keep, false);
  expect_identical(ours, run(copies, keep, false));
  expect_matches(ours, run(strided, keep, true), 1e-5f, 1e-5f);
}

// Operands for positions [t0, t1), continuing from `state`.
Operands segment(const Operands& o, int t0, int t1, const mx::array& state) {
  auto cut = [&](const mx::array& a) {
    auto start = mx::Shape(a.ndim(), 0);
    auto stop = a.shape();
    start[1] = t0;
    stop[1] = t1;
    return mx::slice(a, start, stop);
  };
  return {cut(o.q), cut(o.k), cut(o.v), cut(o.g), cut(o.beta), state};
}

// A prompt prefilled in two calls, the second starting from the state the first returned,
// leaves the same bits as one call over all of it (a recurrent cache relies on this).
TEST_P(GatedDeltaKernel, SegmentedScanEqualsOneScan) {
  const Shape s{2, 64, 2, 4, 32, 16};
  const auto o = make_operands(s, mx::float32, 400);
  for (bool reference : {false, true}) {
    SCOPED_TRACE(reference ? "reference" : "kernel");
    const auto whole = run(o, {23, s.T}, reference);
    const auto first = run(segment(o, 0, 23, o.state), {23}, reference);
    const auto second = run(segment(o, 23, s.T, first[1]), {s.T - 23}, reference);
    expect_identical({mx::concatenate({first[0], second[0]}, 1), first[1], second[1]}, whole);
  }
}

// Two value heads reading one key head, Dk 2 and Dv 1, values exact in binary:
//   head 0: S = [1, 2]; t0: g 1/2 -> [0.5, 1], S k = 0.5, delta = (3 - 0.5) / 2 = 1.25,
//           S = [1.75, 1], y = S q = 1; t1: g 1, S k = 1, delta = (2 - 1) 1 = 1,
//           S = [1.75, 2], y = 3.75.
//   head 1: S = [0, 0]; t0: g 1/2, S k = 0, delta = (2 - 0) 1 = 2, S = [2, 0], y = 0;
//           t1: g 1/2 -> [1, 0], S k = 0, delta = (1 - 0) / 2 = 0.5, S = [1, 0.5], y = 1.5.
TEST_P(GatedDeltaKernel, WorksAnExampleAsByHand) {
  const Operands o{mx::array({0.0f, 1.0f, 1.0f, 1.0f}, {1, 2, 1, 2}),
                   mx::array({1.0f, 0.0f, 0.0f, 1.0f}, {1, 2, 1, 2}),
                   mx::array({3.0f, 2.0f, 2.0f, 1.0f}, {1, 2, 2, 1}),
                   mx::array({0.5f, 0.5f, 1.0f, 0.5f}, {1, 2, 2}),
                   mx::array({0.5f, 1.0f, 1.0f, 0.5f}, {1, 2, 2}),
                   mx::array({1.0f, 2.0f, 0.0f, 0.0f}, {1, 2, 1, 2})};
  const std::vector<mx::array> expected{mx::array({1.0f, 0.0f, 3.75f, 1.5f}, {1, 2, 2, 1}),
                                        mx::array({1.75f, 1.0f, 2.0f, 0.0f}, {1, 2, 1, 2}),
                                        mx::array({1.75f, 2.0f, 1.0f, 0.5f}, {1, 2, 1, 2})};
  for (bool reference : {false, true}) {
    SCOPED_TRACE(reference ? "reference" : "kernel");
    expect_identical(run(o, {1, 2}, reference), expected);
  }
}

INSTANTIATE_TEST_SUITE_P(GatedDeltaCpu, GatedDeltaKernel, kCpuIsas, isa_name);

TEST(GatedDelta, OtherDevicesComposeMlxOperations) {
  if (!mx::is_available(mx::Device::gpu)) GTEST_SKIP() << "no GPU in this MLX build";
  const auto o = make_operands({1, 5, 2, 4, 32, 16}, mx::float32, 700);
  const std::vector<int> keep{2, 5};
  auto gpu = gated_delta(o.q, o.k, o.v, o.g, o.beta, o.state, keep, mx::Device::gpu);
  EXPECT_STRNE(gpu[0].primitive().name(), "HeronGatedDelta");
  auto cpu = gated_delta_reference(o.q, o.k, o.v, o.g, o.beta, o.state, keep, mx::Device::cpu);
  mx::eval(gpu);
  mx::eval(cpu);
  expect_matches(gpu, cpu, 1e-4f, 1e-4f);
}

TEST(GatedDelta, RejectsInconsistentOperands) {
  const Operands ok = make_operands({1, 3, 1, 2, 8, 4}, mx::float32, 600);
  auto expect_rejected = [](const Operands& o, const std::vector<int>& keep, const char* what) {
    SCOPED_TRACE(what);
    EXPECT_THROW(gated_delta(o.q, o.k, o.v, o.g, o.beta, o.state, keep), std::invalid_argument);
    EXPECT_THROW(gated_delta_reference(o.q, o.k, o.v, o.g, o.beta, o.state, keep),
                 std::invalid_argument);
  };
  EXPECT_NO_THROW(run(ok, {1, 3}, false));
  auto bad = ok;
  bad.k = mx::zeros({1, 3, 1, 6});
  expect_rejected(bad, {3}, "k not q's shape");
  bad = ok;
  bad.q = mx::zeros({1, 3, 8});
  bad.k = bad.q;
  expect_rejected(bad, {3}, "3-D q and k");
  bad = ok;
  bad.q = mx::zeros({1, 3, 1, 8}, mx::int32);
  expect_rejected(bad, {3}, "integer q");
  bad = ok;
  bad.v = mx::zeros({1, 2, 2, 4});
  expect_rejected(bad, {3}, "v not q's T");
  bad = ok;
  bad.q = mx::zeros({1, 3, 2, 8});
  bad.k = bad.q;
  bad.v = mx::zeros({1, 3, 3, 4});
  bad.g = bad.beta = mx::zeros({1, 3, 3});
  bad.state = mx::zeros({1, 3, 4, 8});
  expect_rejected(bad, {3}, "3 value heads over 2 key heads");
  bad = ok;
  bad.g = mx::astype(ok.g, mx::float16);
  expect_rejected(bad, {3}, "float16 g");
  bad = ok;
  bad.beta = mx::zeros({1, 3, 1});
  expect_rejected(bad, {3}, "beta not [B, T, Hv]");
  bad = ok;
  bad.state = mx::zeros({1, 2, 8, 4});
  expect_rejected(bad, {3}, "state [B, Hv, Dk, Dv]");
  bad = ok;
  bad.state = mx::astype(ok.state, mx::bfloat16);
  expect_rejected(bad, {3}, "bfloat16 state");
  expect_rejected(ok, {}, "nothing kept");
  expect_rejected(ok, {2}, "T not kept");
  expect_rejected(ok, {0, 3}, "0 kept");
  expect_rejected(ok, {2, 1, 3}, "keep descending");
  expect_rejected(ok, {1, 1, 3}, "keep repeating");
  expect_rejected(ok, {3, 4}, "keep past T");
}

}  // namespace
