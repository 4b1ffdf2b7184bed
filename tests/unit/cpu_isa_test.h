#pragma once
// A CPU kernel's tests run once per implementation (AVX2 and scalar): SetIsa forces it
// for the test and restores the automatic pick after. These are CPU kernels, so the CPU
// is the default device for the test even in a GPU build.
#include <gtest/gtest.h>

#include <string>

#include <mlx/device.h>
#include <mlx/random.h>
#include <mlx/transforms.h>

#include "heron/kernels/qmm_cpu.h"  // Isa

template <void (*SetIsa)(heron::kernels::Isa)>
class CpuIsaTest : public ::testing::TestWithParam<heron::kernels::Isa> {
 protected:
  void SetUp() override {
    device_ = mlx::core::default_device();
    mlx::core::set_default_device(mlx::core::Device::cpu);
    SetIsa(GetParam());
  }
  void TearDown() override {
    SetIsa(heron::kernels::Isa::Auto);
    mlx::core::set_default_device(device_);
  }

 private:
  mlx::core::Device device_ = mlx::core::Device::cpu;
};

inline const auto kCpuIsas =
    ::testing::Values(heron::kernels::Isa::Avx2, heron::kernels::Isa::Scalar);

inline std::string isa_name(const ::testing::TestParamInfo<heron::kernels::Isa>& p) {
  return p.param == heron::kernels::Isa::Avx2 ? "Avx2" : "Scalar";
}

// A float32 input of standard normal values, evaluated.
inline mlx::core::array random(const mlx::core::Shape& shape, uint64_t seed) {
  auto x = mlx::core::random::normal(shape, mlx::core::float32, 0.0f, 1.0f,
                                     mlx::core::random::key(seed));
  mlx::core::eval(x);
  return x;
}
