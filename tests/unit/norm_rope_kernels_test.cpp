// heron::kernels::rms_norm and heron::kernels::Rotary (one fused node each on the CPU)
// against mx::fast::rms_norm and mx::fast::rope (MLX's own composition on the CPU, the
// reference): shapes of decode and prefill, strided inputs (a transposed view, a slice of
// a fused projection), per-row offsets, both rotation layouts, partial rotation, explicit
// frequencies and a position scale.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include <mlx/mlx.h>
#include <mlx/primitives.h>

#include "cpu_isa_test.h"
#include "heron/kernels/rms_norm.h"
#include "heron/kernels/rope.h"

namespace {

namespace mx = mlx::core;

// max |ours - ref| over max |ref|, after checking ours is the fused node.
float relative_error(const mx::array& ours, const mx::array& ref, const char* node) {
  EXPECT_STREQ(ours.primitive().name(), node);
  mx::eval(ours, ref);
  EXPECT_EQ(ours.shape(), ref.shape());
  EXPECT_EQ(ours.dtype(), ref.dtype());
  const float norm = mx::max(mx::abs(ref)).item<float>();
  return mx::max(mx::abs(mx::subtract(ours, ref))).item<float>() / std::max(norm, 1e-30f);
}

TEST(RmsNormKernel, MatchesMlxOnRowsOfEveryLayout) {
  const auto w = random({64}, 1);
  const mx::array inputs[] = {
      random({1, 1, 64}, 2),                                       // decode
      random({3, 17, 64}, 3),                                      // prefill batch
      mx::transpose(random({64, 5}, 4)),                           // last axis strided
      mx::slice(random({2, 4, 192}, 5), {0, 0, 64}, {2, 4, 128}),  // a fused projection's slice
      mx::reshape(random({1, 4, 64}, 6), {1, 4, 1, 64}),           // per-head norm (q/k norms)
  };
  for (const auto& x : inputs) {
    for (float eps : {1e-6f, 1e-2f}) {
      EXPECT_LT(relative_error(heron::kernels::rms_norm(x, w, eps), mx::fast::rms_norm(x, w, eps),
                               "HeronRmsNorm"),
                2e-6f);
    }
  }
  // Large and tiny magnitudes: the mean of squares is formed in float32 as MLX does.
  const auto big = mx::multiply(random({2, 64}, 7), mx::array(1e3f));
  EXPECT_LT(relative_error(heron::kernels::rms_norm(big, w, 1e-6f),
                           mx::fast::rms_norm(big, w, 1e-6f), "HeronRmsNorm"),
            2e-6f);
}

TEST(RmsNormKernel, OtherDtypesGoToMlx) {
  const auto x = mx::astype(random({2, 64}, 8), mx::bfloat16);
  const auto w = mx::astype(random({64}, 9), mx::bfloat16);
  EXPECT_STRNE(heron::kernels::rms_norm(x, w, 1e-6f).primitive().name(), "HeronRmsNorm");
}

struct RopeCase {
  mx::Shape shape;  // [B, H, L, D] or [B, L, D]
  int dims;
  bool traditional;
  bool with_freqs;
  float scale;
  std::vector<int> offsets;  // one per batch row, or one for all
};

std::string describe(const RopeCase& c) {
  std::ostringstream out;
  out << "shape";
  for (int d : c.shape) out << ' ' << d;
  out << " dims " << c.dims << (c.traditional ? " traditional" : "")
      << (c.with_freqs ? " freqs" : "") << " scale " << c.scale;
  return out.str();
}

TEST(RopeKernel, MatchesMlxForEveryLayoutAndFrequencySource) {
  const RopeCase cases[] = {
      {{1, 4, 1, 64}, 64, false, false, 1.0f, {517}},        // decode
      {{1, 4, 9, 64}, 64, false, false, 1.0f, {0}},          // prefill
      {{3, 2, 5, 32}, 32, true, false, 1.0f, {0, 7, 4000}},  // per-row offsets, pairs
      {{2, 3, 4, 48}, 32, false, false, 0.125f, {3, 11}},    // partial rotation, linear scale
      {{2, 3, 4, 48}, 16, true, true, 1.0f, {5, 1}},         // partial, freqs, pairs
      {{1, 2, 3, 64}, 64, false, true, 1.0f, {100000}},      // freqs, far position
      {{2, 6, 32}, 32, false, false, 1.0f, {2, 9}},          // 3-D input
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(describe(c));
    const auto x = random(c.shape, 10 + c.dims);
    const mx::array offsets(c.offsets.data(), {static_cast<int>(c.offsets.size())}, mx::int32);
    std::optional<mx::array> freqs;
    std::optional<float> base = 10000.0f;
    if (c.with_freqs) {
      freqs = mx::add(mx::abs(random({c.dims / 2}, 20)), mx::array(0.5f));
      base.reset();
    }
    const heron::kernels::Rotary rotary(c.dims, c.traditional, base, freqs, c.scale);
    const auto ref = mx::fast::rope(x, c.dims, c.traditional, base, c.scale, offsets, freqs);
    // An inverse frequency one float32 ulp (<= 6e-8) apart turns into an angle apart by
    // position x 6e-8: MLX's float32 exp and our correctly rounded one may differ so.
    const int far = *std::max_element(c.offsets.begin(), c.offsets.end()) + c.shape.end()[-2];
    const float bound = 2e-6f + static_cast<float>(far) * 6e-8f;
    EXPECT_LT(relative_error(rotary(x, offsets), ref, "HeronRope"), bound);
    // The same rows read through a transposed view ([B, L, H, D] -> [B, H, L, D]).
    if (c.shape.size() == 4) {
      const auto xt = mx::transpose(mx::contiguous(mx::transpose(x, {0, 2, 1, 3})), {0, 2, 1, 3});
      EXPECT_LT(relative_error(rotary(xt, offsets), ref, "HeronRope"), bound);
    }
  }
}

TEST(RopeKernel, OtherDtypesGoToMlx) {
  const heron::kernels::Rotary rotary(32, false, 10000.0f, std::nullopt, 1.0f);
  const auto x = mx::astype(random({1, 2, 3, 32}, 30), mx::float16);
  EXPECT_STRNE(rotary(x, mx::array({0}, mx::int32)).primitive().name(), "HeronRope");
}

}  // namespace
