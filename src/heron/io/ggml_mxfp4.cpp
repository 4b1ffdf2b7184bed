#include "heron/io/ggml_mxfp4.h"

#include <cmath>
#include <memory>

#include "heron/io/file_errors.h"

namespace heron::io {

namespace mx = mlx::core;

namespace {

constexpr int kBlock = 32;
constexpr int kBlockBytes = 17;

uint8_t scale_of(const uint8_t* block, int64_t k, const std::string& path,
                 const std::string& tensor) {
  if (block[0] == 0xFF) {
    fail_file(path,
              "tensor " + in_quotes(tensor) + " block " + std::to_string(k) + " has a NaN scale");
  }
  return block[0];
}

// Value i's code (0..15) of a block's 16 code bytes.
uint8_t code(const uint8_t* qs, int i) {
  return i < kBlock / 2 ? qs[i] & 0xF : qs[i - kBlock / 2] >> 4;
}

}  // namespace

Mxfp4Tensor ggml_mxfp4_to_mlx(const uint8_t* data, int64_t rows, int64_t cols,
                              const std::string& path, const std::string& tensor) {
  const int64_t blocks = rows * (cols / kBlock);
  std::unique_ptr<uint32_t[]> words(new uint32_t[blocks * kBlock / 8]);
  auto* codes = reinterpret_cast<uint8_t*>(words.get());  // little-endian: MLX's byte order
  std::unique_ptr<uint8_t[]> scales(new uint8_t[blocks]);
  for (int64_t k = 0; k < blocks; ++k) {
    const uint8_t* block = data + k * kBlockBytes;
    scales[k] = scale_of(block, k, path, tensor);
    uint8_t* out = codes + k * kBlock / 2;
    for (int j = 0; j < kBlock / 2; ++j) {
      out[j] = static_cast<uint8_t>(code(block + 1, 2 * j) | (code(block + 1, 2 * j + 1) << 4));
    }
  }
  const int r = static_cast<int>(rows);
  return {mx::array(words.get(), {r, static_cast<int>(cols / 8)}),
          mx::array(scales.get(), {r, static_cast<int>(cols / kBlock)})};
}

mx::array ggml_mxfp4_to_float(const uint8_t* data, int64_t count, const std::string& path,
                              const std::string& tensor) {
  static constexpr float kValues[16] = {0,    0.5f,  1,  1.5f,  2,  3,  4,  6,
                                        -0.f, -0.5f, -1, -1.5f, -2, -3, -4, -6};
  std::unique_ptr<float[]> out(new float[count]);
  for (int64_t k = 0; k < count / kBlock; ++k) {
    const uint8_t* block = data + k * kBlockBytes;
    const float scale = std::ldexp(1.0f, static_cast<int>(scale_of(block, k, path, tensor)) - 127);
    for (int i = 0; i < kBlock; ++i) out[k * kBlock + i] = scale * kValues[code(block + 1, i)];
  }
  return mx::array(out.get(), {static_cast<int>(count)}, mx::float32);
}

}  // namespace heron::io
