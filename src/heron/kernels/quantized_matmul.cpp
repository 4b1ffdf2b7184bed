#include "heron/kernels/quantized_matmul.h"

#include <memory>

#include <mlx/ops.h>

#include "heron/kernels/cuda/qmv.h"
#include "heron/kernels/cuda/qmv_mma.h"
#include "heron/kernels/qmm_operands.h"
#include "heron/kernels/qmm_primitive.h"

namespace heron::kernels {

namespace mx = mlx::core;

namespace {

// Everything qmm_cpu handles; anything else is MLX's business (including
// reporting bad shapes).
bool fast_path(const mx::array& x, const mx::array& w, const mx::array& scales,
               const mx::array& biases, int group_size, int bits, const mx::Stream& s) {
  if (s.device != mx::Device::cpu) return false;
  if (x.dtype() != mx::float32 || scales.dtype() != mx::float32 || biases.dtype() != mx::float32 ||
      w.dtype() != mx::uint32) {
    return false;
  }
  return affine_qmm_shapes(x, w, scales, biases, group_size, bits);
}

}  // namespace

mx::array quantized_matmul(const mx::array& x, const mx::array& w, const mx::array& scales,
                           const mx::array& biases, int group_size, int bits,
                           mx::StreamOrDevice s) {
  const auto stream = mx::to_stream(s);
  if (cuda::qmv_mma_supported(x, w, scales, biases, group_size, bits, stream) &&
      cuda::qmv_mma_preferred(w)) {
    return cuda::qmv_mma(x, w, scales, biases, group_size, stream);
  }
  if (cuda::qmv_supported(x, w, scales, biases, group_size, bits, stream) &&
      cuda::qmv_preferred(w, bits)) {
    return cuda::qmv(x, w, scales, biases, group_size, bits, stream);
  }
  if (!fast_path(x, w, scales, biases, group_size, bits, stream)) {
    if (group_size < 32) {  // below MLX's smallest quantized_matmul group: dequantize first
      auto dense = mx::dequantize(w, scales, biases, group_size, bits, "affine", std::nullopt,
                                  std::nullopt, s);
      return mx::matmul(x, mx::transpose(dense, s), s);
    }
    return mx::quantized_matmul(x, w, scales, biases, true, group_size, bits, "affine", s);
  }
  auto shape = x.shape();
  shape.back() = w.shape(0);
  return mx::array(std::move(shape), mx::float32,
                   std::make_shared<QuantizedMatmulCpu>(stream, group_size, bits),
                   {x, w, scales, biases});
}

}  // namespace heron::kernels
