#pragma once
// The compute type the model tests run in and the tolerances that go with it.
// HERON_TEST_DTYPE picks it: float32 (default; the CPU's type) or, for GPU runs,
// bfloat16 or float16. References are always float32 mlx-lm runs on the CPU.
#include <cstdlib>
#include <stdexcept>
#include <string>

#include <mlx/dtype.h>

namespace heron::test {

struct Precision {
  std::string name;
  mlx::core::Dtype dtype;
  // max |ours - reference| / max |reference| over all logits of a tiny model. float32:
  // 1e-4. 16-bit types round weights and every activation to 8 (bfloat16, unit 3.9e-3)
  // or 11 (float16, unit 4.9e-4) significant bits; these allow about 13 and 20 units.
  float logits_rel_tol;
  // SmolLM2: an argmax may differ from mlx-lm's float32 one only where mlx-lm's top-2
  // margin is below this. float32: 0.01. 16-bit: logits reach about 30, so a few units
  // of rounding of the largest logits is 0.5 (float16) or 2.0 (bfloat16).
  double near_tie;
  bool reduced() const { return dtype != mlx::core::float32; }
};

inline Precision test_precision() {
  const char* env = std::getenv("HERON_TEST_DTYPE");
  const std::string name = env && *env ? env : "float32";
  if (name == "float32") return {name, mlx::core::float32, 1e-4f, 0.01};
  if (name == "float16") return {name, mlx::core::float16, 1e-2f, 0.5};
  if (name == "bfloat16") return {name, mlx::core::bfloat16, 5e-2f, 2.0};
  throw std::invalid_argument("HERON_TEST_DTYPE must be float32, float16 or bfloat16, not '" +
                              name + "'");
}

// Greedy SmolLM2 continuations in a 16-bit type must repeat the float32 CPU run for at
// least this many tokens, or part from it earlier only at a near-tie of the reference
// (one prompt's 7th token has a top-2 margin of 0.01, which bfloat16 cannot resolve).
constexpr size_t kReducedGreedyPrefix = 16;

}  // namespace heron::test
