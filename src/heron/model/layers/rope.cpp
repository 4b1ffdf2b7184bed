#include "heron/model/layers/rope.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <mlx/ops.h>

namespace heron::model {

namespace mx = mlx::core;

namespace {

// Llama 3.1 frequency scaling: long wavelengths slow down by `factor`, short ones stay,
// and the band between blends smoothly. Returned as MLX's `freqs` (wavelength / 2pi).
std::vector<float> llama3_freqs(const ModelConfig& c) {
  const auto& s = c.rope_scaling;
  const double low_wavelen = s.original_max_position / double{s.low_freq_factor};
  const double high_wavelen = s.original_max_position / double{s.high_freq_factor};
  std::vector<float> freqs;
  for (int i = 0; i < c.head_dim; i += 2) {
    double f = std::pow(static_cast<double>(c.rope_theta), static_cast<double>(i) / c.head_dim);
    const double wavelen = 2 * M_PI * f;
    if (wavelen > low_wavelen) {
      f *= s.factor;
    } else if (wavelen > high_wavelen) {
      const double smooth = (s.original_max_position / wavelen - s.low_freq_factor) /
                            (s.high_freq_factor - s.low_freq_factor);
      f /= (1 - smooth) / s.factor + smooth;
    }
    freqs.push_back(static_cast<float>(f));
  }
  return freqs;
}

// YaRN (as mlx-lm computes it): frequencies interpolated by `factor` for slow rotations,
// kept for fast ones (more than beta_fast turns over the original context), blended
// linearly between; the band's edges are whole dimensions.
std::vector<float> yarn_freqs(const ModelConfig& c) {
  const auto& s = c.rope_scaling;
  const int dims = c.head_dim;
  const double base = c.rope_theta;
  auto correction_dim = [&](double rotations) {
    return dims * std::log(s.original_max_position / (rotations * 2 * M_PI)) / (2 * std::log(base));
  };
  const double low = std::max(std::floor(correction_dim(s.beta_fast)), 0.0);
  double high = std::min(std::ceil(correction_dim(s.beta_slow)), double(dims - 1));
  if (high == low) high += 0.001;
  std::vector<float> freqs;
  for (int i = 0; i < dims / 2; ++i) {
    const double extra = std::pow(base, 2.0 * i / dims);
    const double inter = s.factor * extra;
    const double mask = 1.0 - std::clamp((i - low) / (high - low), 0.0, 1.0);
    freqs.push_back(static_cast<float>(inter * extra / (inter * mask + extra * (1 - mask))));
  }
  return freqs;
}

float yarn_attention_factor(const RopeScaling& s) {
  if (s.attention_factor) return *s.attention_factor;
  auto mscale = [&](double m) { return s.factor <= 1 ? 1.0 : 0.1 * m * std::log(s.factor) + 1.0; };
  return static_cast<float>(mscale(s.mscale) / mscale(s.mscale_all_dim));
}

std::optional<mx::array> frequencies(const ModelConfig& c,
                                     const std::optional<mx::array>& freq_factors) {
  if (c.rope_scaling.type == "llama3" || c.rope_scaling.type == "yarn") {
    auto f = c.rope_scaling.type == "yarn" ? yarn_freqs(c) : llama3_freqs(c);
    return mx::array(f.data(), {static_cast<int>(f.size())}, mx::float32);
  }
  if (!freq_factors) return std::nullopt;
  const int dims = c.head_dim;
  auto exponents = mx::divide(mx::arange(0, dims, 2, mx::float32), mx::array(float(dims)));
  return mx::multiply(mx::power(mx::array(c.rope_theta), exponents),
                      mx::astype(*freq_factors, mx::float32));
}

kernels::Rotary make_rotary(const ModelConfig& c, const std::optional<mx::array>& freq_factors) {
  auto freqs = frequencies(c, freq_factors);
  std::optional<float> base;
  if (!freqs) base = c.rope_theta;
  const float scale = c.rope_scaling.type == "linear" ? 1.0f / c.rope_scaling.factor : 1.0f;
  return {c.rotary_dims > 0 ? c.rotary_dims : c.head_dim, c.rope_traditional, base,
          std::move(freqs), scale};
}

}  // namespace

Rope::Rope(const ModelConfig& c, const std::optional<mx::array>& freq_factors)
    : rotary_(make_rotary(c, freq_factors)),
      attention_factor_(c.rope_scaling.type == "yarn" ? yarn_attention_factor(c.rope_scaling)
                                                      : 1.0f) {}

mx::array Rope::operator()(const mx::array& x, const mx::array& offsets) const {
  return rotary_(x, offsets);
}

}  // namespace heron::model
