#include "heron/io/ggml_blocks.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "heron/io/file_errors.h"
#include "heron/io/ggml_types.h"

namespace heron::io {

namespace mx = mlx::core;

namespace {

float half_to_float(const uint8_t* p) {
  const uint32_t h = p[0] | (uint32_t{p[1]} << 8);
  const uint32_t sign = (h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1Fu;
  uint32_t mantissa = h & 0x3FFu;
  uint32_t bits = 0;
  if (exponent == 0x1F) {
    bits = sign | 0x7F800000u | (mantissa << 13);  // inf, NaN
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa != 0) {  // subnormal: normalize
    int e = 113;
    while (!(mantissa & 0x400u)) mantissa <<= 1, --e;
    bits = sign | (static_cast<uint32_t>(e) << 23) | ((mantissa & 0x3FFu) << 13);
  } else {
    bits = sign;
  }
  return std::bit_cast<float>(bits);
}

// One block decoded: integer codes q (block_size of them) and a scale and bias per group.
using Decoder = void (*)(const uint8_t* block, uint8_t* q, float* scale, float* bias);

// Two 4-bit codes per byte: the low nibbles are the first half of the block.
void split_nibbles(const uint8_t* qs, int n, uint8_t* q) {
  for (int j = 0; j < n; ++j) {
    q[j] = qs[j] & 0xF;
    q[j + n] = qs[j] >> 4;
  }
}

void decode_q4_0(const uint8_t* b, uint8_t* q, float* scale, float* bias) {
  const float d = half_to_float(b);
  split_nibbles(b + 2, 16, q);
  scale[0] = d, bias[0] = -8.0f * d;
}

void decode_q4_1(const uint8_t* b, uint8_t* q, float* scale, float* bias) {
  split_nibbles(b + 4, 16, q);
  scale[0] = half_to_float(b), bias[0] = half_to_float(b + 2);
}

// Q5_0 / Q5_1 codes: a nibble plus bit j of the 32-bit high mask.
void five_bit_codes(const uint8_t* qh_bytes, const uint8_t* qs, uint8_t* q) {
  uint32_t qh = 0;
  std::memcpy(&qh, qh_bytes, 4);
  split_nibbles(qs, 16, q);
  for (int j = 0; j < 32; ++j) q[j] = static_cast<uint8_t>(q[j] | (((qh >> j) & 1u) << 4));
}

void decode_q5_0(const uint8_t* b, uint8_t* q, float* scale, float* bias) {
  const float d = half_to_float(b);
  five_bit_codes(b + 2, b + 6, q);
  scale[0] = d, bias[0] = -16.0f * d;
}

void decode_q5_1(const uint8_t* b, uint8_t* q, float* scale, float* bias) {
  five_bit_codes(b + 4, b + 8, q);
  scale[0] = half_to_float(b), bias[0] = half_to_float(b + 2);
}

void decode_q8_0(const uint8_t* b, uint8_t* q, float* scale, float* bias) {
  const float d = half_to_float(b);
  for (int j = 0; j < 32; ++j) q[j] = static_cast<uint8_t>(static_cast<int8_t>(b[2 + j]) + 128);
  scale[0] = d, bias[0] = -128.0f * d;
}

// The 2-bit fields of a 256-value K block: value e is bits 2*((e%128)/32) of byte
// (e/128)*32 + e%32.
uint8_t two_bits(const uint8_t* qs, int e) {
  return (qs[(e / 128) * 32 + e % 32] >> (2 * ((e % 128) / 32))) & 3;
}

void decode_q2_k(const uint8_t* b, uint8_t* q, float* scale, float* bias) {
  const uint8_t* sc = b;
  const float d = half_to_float(b + 80), dmin = half_to_float(b + 82);
  for (int e = 0; e < 256; ++e) q[e] = two_bits(b + 16, e);
  for (int i = 0; i < 16; ++i) {
    scale[i] = d * static_cast<float>(sc[i] & 0xF);
    bias[i] = -(dmin * static_cast<float>(sc[i] >> 4));
  }
}

void decode_q3_k(const uint8_t* b, uint8_t* q, float* scale, float* bias) {
  const uint8_t* hmask = b;
  const uint8_t* sc = b + 96;
  const float d = half_to_float(b + 108);
  // Signed codes ql - 4 * (1 - h) in -4..3, stored shifted by 4: ql + 4h in 0..7.
  for (int e = 0; e < 256; ++e) {
    q[e] = static_cast<uint8_t>(two_bits(b + 32, e) + 4 * ((hmask[e % 32] >> (e / 32)) & 1));
  }
  // 16 six-bit scales: low nibbles in bytes 0..7 (then their high nibbles), the top two
  // bits in bytes 8..11.
  for (int i = 0; i < 16; ++i) {
    const int low = i < 8 ? sc[i] & 0xF : sc[i - 8] >> 4;
    const int high = (sc[8 + i % 4] >> (2 * (i / 4))) & 3;
    const float dl = d * static_cast<float>((low | (high << 4)) - 32);
    scale[i] = dl, bias[i] = -4.0f * dl;
  }
}

// Q4_K / Q5_K: eight 6-bit scales and mins packed into 12 bytes.
void k_scales_mins(const uint8_t* s, int* sc, int* mn) {
  for (int i = 0; i < 4; ++i) {
    sc[i] = s[i] & 63;
    mn[i] = s[i + 4] & 63;
    sc[i + 4] = (s[i + 8] & 0xF) | ((s[i] >> 6) << 4);
    mn[i + 4] = (s[i + 8] >> 4) | ((s[i + 4] >> 6) << 4);
  }
}

// Q4_K / Q5_K: groups of 32 with scale d * sc and bias -dmin * m.
void k_groups(const uint8_t* b, float* scale, float* bias) {
  const float d = half_to_float(b), dmin = half_to_float(b + 2);
  int sc[8], mn[8];
  k_scales_mins(b + 4, sc, mn);
  for (int g = 0; g < 8; ++g) {
    scale[g] = d * static_cast<float>(sc[g]);
    bias[g] = -(dmin * static_cast<float>(mn[g]));
  }
}

// 4-bit codes of a K block: 32 bytes per 64 values, low nibbles first.
void k_nibbles(const uint8_t* qs, uint8_t* q) {
  for (int c = 0; c < 4; ++c) split_nibbles(qs + 32 * c, 32, q + 64 * c);
}

void decode_q4_k(const uint8_t* b, uint8_t* q, float* scale, float* bias) {
  k_nibbles(b + 16, q);
  k_groups(b, scale, bias);
}

void decode_q5_k(const uint8_t* b, uint8_t* q, float* scale, float* bias) {
  const uint8_t* qh = b + 16;
  k_nibbles(b + 48, q);
  for (int e = 0; e < 256; ++e) {
    q[e] = static_cast<uint8_t>(q[e] | (((qh[e % 32] >> (e / 32)) & 1) << 4));
  }
  k_groups(b, scale, bias);
}

void decode_q6_k(const uint8_t* b, uint8_t* q, float* scale, float* bias) {
  const uint8_t* ql = b;
  const uint8_t* qh = b + 128;
  const float d = half_to_float(b + 208);
  for (int e = 0; e < 256; ++e) {
    const int half = e / 128, r = e % 128;
    const int low = (ql[half * 64 + r % 64] >> (4 * (r / 64))) & 0xF;
    q[e] = static_cast<uint8_t>(low | (two_bits(qh, e) << 4));
  }
  for (int i = 0; i < 16; ++i) {
    scale[i] = d * static_cast<float>(static_cast<int8_t>(b[192 + i]));
    bias[i] = -32.0f * scale[i];  // codes q - 32
  }
}

struct Codec {
  GGMLType type;
  AffineForm form;
  Decoder decode;
};

constexpr Codec kCodecs[] = {
    {GGMLType::Q4_0, {4, 32}, decode_q4_0}, {GGMLType::Q4_1, {4, 32}, decode_q4_1},
    {GGMLType::Q5_0, {5, 32}, decode_q5_0}, {GGMLType::Q5_1, {5, 32}, decode_q5_1},
    {GGMLType::Q8_0, {8, 32}, decode_q8_0}, {GGMLType::Q2_K, {4, 16}, decode_q2_k},
    {GGMLType::Q3_K, {4, 16}, decode_q3_k}, {GGMLType::Q4_K, {4, 32}, decode_q4_k},
    {GGMLType::Q5_K, {5, 32}, decode_q5_k}, {GGMLType::Q6_K, {8, 16}, decode_q6_k},
};

const Codec* codec_of(uint32_t type) {
  for (const auto& c : kCodecs) {
    if (static_cast<uint32_t>(c.type) == type) return &c;
  }
  return nullptr;
}

// Copied into MLX's own allocation: wrapping our buffer with a deleter goes through
// allocator::make_buffer, whose bookkeeping LeakSanitizer reports as leaked.
template <class T>
mx::array owned_array(std::unique_ptr<T[]> data, mx::Shape shape, mx::Dtype dtype) {
  return mx::array(data.get(), std::move(shape), dtype);
}

// Walks the blocks in order, decoding each and checking its scales.
class BlockWalker {
 public:
  BlockWalker(uint32_t type, const std::string& path, const std::string& tensor)
      : codec_(codec_of(type)), path_(path), tensor_(tensor) {
    if (!codec_) fail_file(path, "tensor " + in_quotes(tensor) + " is not of a block type we read");
    const auto* info = ggml_type_info(type);
    block_size_ = static_cast<int>(info->block_size);
    type_size_ = static_cast<int>(info->type_size);
    q_.resize(static_cast<size_t>(block_size_));
    groups_ = block_size_ / codec_->form.group_size;
    scale_.resize(static_cast<size_t>(groups_));
    bias_.resize(static_cast<size_t>(groups_));
  }

  const AffineForm& form() const { return codec_->form; }
  int block_size() const { return block_size_; }
  int groups() const { return groups_; }

  // Decodes block `index` of `data`; q(), scales() and biases() then hold it.
  void decode(const uint8_t* data, int64_t index) {
    codec_->decode(data + index * type_size_, q_.data(), scale_.data(), bias_.data());
    for (int g = 0; g < groups_; ++g) {
      if (!std::isfinite(scale_[g]) || !std::isfinite(bias_[g])) {
        fail_file(path_, "tensor " + in_quotes(tensor_) + " block " + std::to_string(index) +
                             " has a non-finite scale");
      }
    }
  }
  const uint8_t* q() const { return q_.data(); }
  const float* scales() const { return scale_.data(); }
  const float* biases() const { return bias_.data(); }

 private:
  const Codec* codec_;
  const std::string& path_;
  const std::string& tensor_;
  int block_size_ = 0, type_size_ = 0, groups_ = 0;
  std::vector<uint8_t> q_;
  std::vector<float> scale_, bias_;
};

}  // namespace

std::optional<AffineForm> ggml_affine_form(uint32_t type) {
  const auto* c = codec_of(type);
  if (!c) return std::nullopt;
  return c->form;
}

AffineTensor ggml_blocks_to_affine(uint32_t type, const uint8_t* data, int64_t rows, int64_t cols,
                                   const std::string& path, const std::string& tensor) {
  BlockWalker walk(type, path, tensor);
  const int bits = walk.form().bits;
  const int64_t words_per_row = cols * bits / 32;
  const int64_t groups_per_row = cols / walk.form().group_size;
  const int64_t blocks_per_row = cols / walk.block_size();
  std::unique_ptr<uint32_t[]> packed(new uint32_t[rows * words_per_row]());
  std::unique_ptr<float[]> scales(new float[rows * groups_per_row]);
  std::unique_ptr<float[]> biases(new float[rows * groups_per_row]);
  const int words_per_block = walk.block_size() * bits / 32;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < blocks_per_row; ++k) {
      walk.decode(data, r * blocks_per_row + k);
      uint32_t* w = packed.get() + r * words_per_row + k * words_per_block;
      for (int i = 0; i < walk.block_size(); ++i) {  // low bits first, across words
        const int bit = i * bits, shift = bit % 32;
        w[bit / 32] |= uint32_t{walk.q()[i]} << shift;
        if (shift + bits > 32) w[bit / 32 + 1] |= uint32_t{walk.q()[i]} >> (32 - shift);
      }
      const int64_t g0 = r * groups_per_row + k * walk.groups();
      std::memcpy(scales.get() + g0, walk.scales(), sizeof(float) * walk.groups());
      std::memcpy(biases.get() + g0, walk.biases(), sizeof(float) * walk.groups());
    }
  }
  const auto r = static_cast<int>(rows);
  return {owned_array(std::move(packed), {r, static_cast<int>(words_per_row)}, mx::uint32),
          owned_array(std::move(scales), {r, static_cast<int>(groups_per_row)}, mx::float32),
          owned_array(std::move(biases), {r, static_cast<int>(groups_per_row)}, mx::float32)};
}

mx::array ggml_blocks_to_float(uint32_t type, const uint8_t* data, int64_t count,
                               const std::string& path, const std::string& tensor) {
  BlockWalker walk(type, path, tensor);
  const int group = walk.form().group_size;
  std::unique_ptr<float[]> out(new float[count]);
  for (int64_t k = 0; k < count / walk.block_size(); ++k) {
    walk.decode(data, k);
    float* o = out.get() + k * walk.block_size();
    for (int i = 0; i < walk.block_size(); ++i) {
      o[i] = walk.scales()[i / group] * static_cast<float>(walk.q()[i]) + walk.biases()[i / group];
    }
  }
  return owned_array(std::move(out), {static_cast<int>(count)}, mx::float32);
}

}  // namespace heron::io
