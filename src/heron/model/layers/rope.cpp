#include "heron/model/layers/rope.h"

#include <cmath>
#include <vector>

#include <mlx/fast.h>
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

}  // namespace

Rope::Rope(const ModelConfig& c, std::optional<mx::array> freq_factors)
    : dims_(c.head_dim), traditional_(c.rope_traditional), base_(c.rope_theta) {
  if (c.rope_scaling.type == "linear") scale_ = 1.0f / c.rope_scaling.factor;
  if (c.rope_scaling.type == "llama3") {
    auto f = llama3_freqs(c);
    freqs_ = mx::array(f.data(), {static_cast<int>(f.size())}, mx::float32);
  } else if (freq_factors) {
    auto exponents = mx::divide(mx::arange(0, dims_, 2, mx::float32), mx::array(float(dims_)));
    freqs_ = mx::multiply(mx::power(mx::array(base_), exponents),
                          mx::astype(*freq_factors, mx::float32));
  }
}

mx::array Rope::operator()(const mx::array& x, const mx::array& offsets) const {
  if (freqs_) return mx::fast::rope(x, dims_, traditional_, std::nullopt, scale_, offsets, freqs_);
  return mx::fast::rope(x, dims_, traditional_, base_, scale_, offsets);
}

}  // namespace heron::model
