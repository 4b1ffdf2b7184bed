// GGUF header reader: the real SmolLM2 file, every metadata type, and corrupt files.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <random>

#include "heron/core/default_model.h"
#include "heron/io/gguf.h"
#include "model_file_writers.h"

namespace {
using namespace heron::test;
using heron::io::read_gguf_header;

constexpr uint32_t kQ4_0 = 2, kQ8_0 = 8, kQ6_K = 14;  // ggml tensor type ids

// A small valid file: three tensors, a few metadata keys.
GgufBuilder small_gguf() {
  GgufBuilder b;
  b.kv_str("general.architecture", "llama").kv_u32("llama.block_count", 2);
  b.kv("tokenizer.ggml.tokens", kArr, Bytes().u32(kStr).u64(3).str("a").str("bb").str("ccc"));
  b.tensor("a.weight", {32, 2}, 0).tensor("b.weight", {64, 3}, kQ4_0).tensor("c.bias", {5}, 1);
  return b;
}

struct GgufTest : ::testing::Test {
  TempDir dir;
  std::string path = dir.file("model.gguf");
  std::string write(const GgufBuilder& b) {
    write_file(path, b.build());
    return path;
  }
  // Writes b and returns the error reading it raises.
  std::string header_error(const GgufBuilder& b) {
    write(b);
    return error_of([&] { read_gguf_header(path); });
  }
};

TEST_F(GgufTest, ReadsRealSmolLM2) {
  std::filesystem::path model;
  try {
    model = heron::default_model_path();
  } catch (const heron::Error& e) {
    GTEST_SKIP() << e.what();
  }
  auto h = read_gguf_header(model.string());
  EXPECT_EQ(h.version, 3u);
  EXPECT_EQ(h.metadata["general.architecture"], "llama");
  EXPECT_EQ(h.metadata["llama.block_count"], 30);
  EXPECT_EQ(h.metadata["llama.embedding_length"], 576);
  EXPECT_EQ(h.metadata_types["llama.block_count"], "uint32");
  EXPECT_EQ(h.metadata["tokenizer.ggml.tokens"].size(), 49152u);
  EXPECT_EQ(h.metadata_types["tokenizer.ggml.tokens"], "array[string]");
  EXPECT_EQ(h.metadata_types["tokenizer.ggml.token_type"], "array[int32]");
  EXPECT_EQ(h.metadata["tokenizer.ggml.merges"].size(), 48900u);
  EXPECT_EQ(h.metadata["tokenizer.ggml.add_bos_token"], false);
  EXPECT_FLOAT_EQ(h.metadata["llama.rope.freq_base"].get<float>(), 100000.0f);
  EXPECT_EQ(h.alignment, 32u);
  EXPECT_EQ(h.data_offset, 1785664u);  // as gguf-py's GGUFReader reports
  ASSERT_EQ(h.tensors.size(), 272u);
  int q4_1 = 0, f32 = 0, q8_0 = 0;
  for (const auto& t : h.tensors) {
    q4_1 += t.type == 3;
    f32 += t.type == 0;
    q8_0 += t.type == 8;
  }
  EXPECT_EQ(q4_1, 210);
  EXPECT_EQ(f32, 61);
  EXPECT_EQ(q8_0, 1);
  const auto& emb = h.tensors[0];
  EXPECT_EQ(emb.name, "token_embd.weight");
  EXPECT_EQ(emb.dims, (std::vector<uint64_t>{576, 49152}));
  EXPECT_EQ(emb.type, 8u);
  EXPECT_EQ(emb.offset, 0u);
  EXPECT_EQ(emb.nbytes, 30081024u);
  auto q = std::find_if(h.tensors.begin(), h.tensors.end(),
                        [](const auto& t) { return t.name == "blk.0.attn_q.weight"; });
  ASSERT_NE(q, h.tensors.end());
  EXPECT_EQ(q->type, 3u);
  EXPECT_EQ(q->offset, 33806656u - 1785664u);
  EXPECT_EQ(q->nbytes, 207360u);
}

TEST_F(GgufTest, ReadsSmallValidFile) {
  auto h = read_gguf_header(write(small_gguf()));
  EXPECT_EQ(h.path, path);
  EXPECT_EQ(h.metadata["tokenizer.ggml.tokens"], (nlohmann::json{"a", "bb", "ccc"}));
  ASSERT_EQ(h.tensors.size(), 3u);
  EXPECT_EQ(h.tensors[1].name, "b.weight");
  EXPECT_EQ(h.tensors[1].nbytes, 3u * 2 * 18);
  EXPECT_EQ(h.tensors[1].offset % 32, 0u);
  EXPECT_EQ(h.data_offset % 32, 0u);
}

TEST_F(GgufTest, AcceptsVersion2) {
  auto b = small_gguf();
  b.version = 2;
  EXPECT_EQ(read_gguf_header(write(b)).version, 2u);
}

TEST_F(GgufTest, ReadsEveryValueType) {
  GgufBuilder b;
  b.kv("u8", kU8, Bytes().u8(200))
      .kv("i8", kI8, Bytes().put<int8_t>(-5))
      .kv("u16", kU16, Bytes().u16(65535))
      .kv("i16", kI16, Bytes().put<int16_t>(-300))
      .kv("u32", kU32, Bytes().u32(4000000000u))
      .kv("i32", kI32, Bytes().put<int32_t>(-70000))
      .kv("u64", kU64, Bytes().u64(std::numeric_limits<uint64_t>::max()))
      .kv("i64", kI64, Bytes().put<int64_t>(std::numeric_limits<int64_t>::min()))
      .kv("f32", kF32, Bytes().put<float>(1.5f))
      .kv("f64", kF64, Bytes().put<double>(-2.25))
      .kv("t", kBool, Bytes().u8(1))
      .kv("f", kBool, Bytes().u8(0))
      .kv("s", kStr, Bytes().str("héllo"))
      .kv("empty", kArr, Bytes().u32(kU8).u64(0))
      .kv("ints", kArr, Bytes().u32(kI64).u64(2).put<int64_t>(-1).put<int64_t>(7))
      .kv("nested", kArr,
          Bytes().u32(kArr).u64(2).u32(kU16).u64(1).u16(3).u32(kStr).u64(1).str("x"));
  auto h = read_gguf_header(write(b));
  const auto& m = h.metadata;
  EXPECT_EQ(m["u8"], 200);
  EXPECT_EQ(m["i8"], -5);
  EXPECT_EQ(m["u16"], 65535);
  EXPECT_EQ(m["i16"], -300);
  EXPECT_EQ(m["u32"], 4000000000u);
  EXPECT_EQ(m["i32"], -70000);
  EXPECT_EQ(m["u64"].get<uint64_t>(), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(m["i64"].get<int64_t>(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(m["f32"], 1.5);
  EXPECT_EQ(m["f64"], -2.25);
  EXPECT_EQ(m["t"], true);
  EXPECT_EQ(m["f"], false);
  EXPECT_EQ(m["s"], "héllo");
  EXPECT_EQ(m["empty"], nlohmann::json::array());
  EXPECT_EQ(m["ints"], (nlohmann::json{-1, 7}));
  EXPECT_EQ(m["nested"], (nlohmann::json{{3}, {"x"}}));
  EXPECT_EQ(h.metadata_types["f64"], "float64");
  EXPECT_EQ(h.metadata_types["ints"], "array[int64]");
  EXPECT_EQ(h.metadata_types["nested"], "array[array]");
  EXPECT_EQ(h.metadata_types["s"], "string");
  EXPECT_TRUE(h.tensors.empty());
}

TEST_F(GgufTest, KeepsInvalidUtf8Bytes) {
  GgufBuilder b = small_gguf();
  b.kv_str("bad", std::string("a\xff\xfe", 3));
  auto h = read_gguf_header(write(b));
  EXPECT_EQ(h.metadata["bad"].get<std::string>(), std::string("a\xff\xfe", 3));
  // Documented in gguf.h: dump() refuses such strings unless told to replace them.
  EXPECT_THROW((void)h.metadata.dump(), nlohmann::json::type_error);
  EXPECT_NO_THROW((void)h.metadata.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

TEST_F(GgufTest, HonoursPowerOfTwoAlignment) {
  auto b = small_gguf();
  b.alignment = 64;
  b.kv_u32("general.alignment", 64);
  auto h = read_gguf_header(write(b));
  EXPECT_EQ(h.alignment, 64u);
  EXPECT_EQ(h.data_offset % 64, 0u);
  for (const auto& t : h.tensors) EXPECT_EQ(t.offset % 64, 0u);
}

TEST_F(GgufTest, RejectsTruncatedFiles) {
  auto bytes = small_gguf().build();
  auto h = read_gguf_header(write(small_gguf()));
  const size_t first_key = 24 + 8 + 5;  // inside "general.architecture"
  const size_t mid_infos = h.data_offset - 40;
  const size_t mid_data = h.data_offset + h.tensors[1].offset + 10;
  for (size_t cut : {size_t{0}, size_t{3}, size_t{6}, size_t{12}, size_t{20}, first_key,
                     size_t{100}, mid_infos, static_cast<size_t>(h.data_offset) - 1,
                     static_cast<size_t>(h.data_offset), mid_data, bytes.size() - 1}) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    write_file(path, std::vector<uint8_t>(bytes.begin(), bytes.begin() + static_cast<long>(cut)));
    auto msg = error_of([&] { read_gguf_header(path); });
    EXPECT_CONTAINS(msg, path + ": ");
    bool named = msg.find("truncated") != std::string::npos ||
                 msg.find("runs past the end of the file") != std::string::npos ||
                 msg.find("exceeds the") != std::string::npos ||
                 msg.find("is impossible for a file of") != std::string::npos;
    EXPECT_TRUE(named) << msg;
  }
}

TEST_F(GgufTest, RejectsMissingFile) {
  auto msg = error_of([&] { read_gguf_header(dir.file("nope.gguf")); });
  EXPECT_CONTAINS(msg, "nope.gguf: cannot open");
}

TEST_F(GgufTest, RejectsBadMagic) {
  auto b = small_gguf();
  b.magic = "GGML";
  auto msg = header_error(b);
  EXPECT_CONTAINS(msg, path + ": not a GGUF file (bad magic bytes 47 47 4d 4c");
}

TEST_F(GgufTest, RejectsBadVersions) {
  for (uint32_t v : {0u, 1u, 4u, 0xffffffffu}) {
    auto b = small_gguf();
    b.version = v;
    EXPECT_CONTAINS(header_error(b), "unsupported GGUF version " + std::to_string(v));
  }
  auto b = small_gguf();
  b.version = 0x03000000;  // a big-endian v3 file read little-endian
  EXPECT_CONTAINS(header_error(b), "big-endian GGUF files are not supported");
}

TEST_F(GgufTest, RejectsAbsurdCounts) {
  auto b = small_gguf();
  b.tensor_count = uint64_t{1} << 40;
  EXPECT_CONTAINS(header_error(b), "tensor count 1099511627776 is impossible");
  b = small_gguf();
  b.kv_count = std::numeric_limits<uint64_t>::max();
  EXPECT_CONTAINS(header_error(b), "metadata key count 18446744073709551615 is impossible");
  // A count that fits the file size but not the entries: truncated, not a crash.
  b = small_gguf();
  b.kv_count = 10;
  EXPECT_CONTAINS(header_error(b), path + ": ");
}

TEST_F(GgufTest, RejectsAbsurdStringLengths) {
  GgufBuilder b;
  b.kvs.push_back(Bytes().u64(uint64_t{1} << 50).raw(filler(64)));  // key length
  EXPECT_CONTAINS(header_error(b), "string length 1125899906842624 at offset 24 exceeds the");
  b = GgufBuilder();
  b.kv("k", kStr, Bytes().u64(uint64_t{1} << 62));
  EXPECT_CONTAINS(header_error(b), "metadata key 'k': string length 4611686018427387904");
}

TEST_F(GgufTest, RejectsAbsurdArrayLengths) {
  GgufBuilder b;
  b.kv("arr", kArr, Bytes().u32(kU32).u64(uint64_t{1} << 61));
  EXPECT_CONTAINS(header_error(b),
                  "metadata key 'arr': array length 2305843009213693952 of uint32");
  b = GgufBuilder();  // 100 strings need at least 800 bytes
  b.kv("strs", kArr, Bytes().u32(kStr).u64(100).str("x"));
  EXPECT_CONTAINS(header_error(b), "array length 100 of string exceeds");
}

TEST_F(GgufTest, RejectsBadMetadata) {
  GgufBuilder b;
  b.kv("k", 13, Bytes().u32(0));
  EXPECT_CONTAINS(header_error(b), "metadata key 'k' has unknown value type 13");
  b = GgufBuilder();
  b.kv("arr", kArr, Bytes().u32(99).u64(0));
  EXPECT_CONTAINS(header_error(b), "array has unknown element type 99");
  b = GgufBuilder();
  b.kv("b", kBool, Bytes().u8(2));
  EXPECT_CONTAINS(header_error(b), "metadata key 'b': bool value 2");
  b = GgufBuilder();
  b.kv_u32("x", 1).kv_u32("x", 2);
  EXPECT_CONTAINS(header_error(b), "duplicate metadata key 'x'");
  b = GgufBuilder();
  b.kv_u32("", 1);
  EXPECT_CONTAINS(header_error(b), "metadata key #0 is empty");
  b = GgufBuilder();  // 9 levels of arrays
  Bytes deep;
  for (int i = 0; i < 9; ++i) deep.u32(kArr).u64(1);
  deep.u32(kU8).u64(0);
  b.kv("deep", kArr, deep);
  EXPECT_CONTAINS(header_error(b), "arrays nested deeper than 8");
}

TEST_F(GgufTest, RejectsBadAlignment) {
  for (uint32_t a : {0u, 48u}) {
    auto b = small_gguf();
    b.kv_u32("general.alignment", a);
    EXPECT_CONTAINS(header_error(b),
                    "general.alignment " + std::to_string(a) + " is not a nonzero power of two");
  }
  auto b = small_gguf();
  b.kv("general.alignment", kU64, Bytes().u64(32));
  EXPECT_CONTAINS(header_error(b), "general.alignment has type uint64 (must be uint32)");
}

TEST_F(GgufTest, RejectsTensorOffsetPastEnd) {
  const auto data_offset = read_gguf_header(write(small_gguf())).data_offset;
  auto b = small_gguf();
  b.tensors[2].offset = 4096;
  b.tensors[2].data.clear();
  EXPECT_CONTAINS(header_error(b), "tensor 'c.bias' data (offset 4096 in the data section at " +
                                       std::to_string(data_offset) +
                                       ", 10 bytes) runs past the end of the file (size ");
  b = small_gguf();
  b.tensors[0].offset = std::numeric_limits<uint64_t>::max() - 31;
  b.tensors[0].data.clear();
  EXPECT_CONTAINS(header_error(b), "tensor 'a.weight' data (offset 18446744073709551584");
}

TEST_F(GgufTest, RejectsOverlappingTensors) {
  // Default layout: a.weight [0, 256), b.weight [256, 364), c.bias [384, 394).
  auto b = small_gguf();
  b.tensors[2].offset = 288;  // aligned, but inside b.weight
  EXPECT_CONTAINS(header_error(b),
                  "tensors 'b.weight' (offset 256, 108 bytes) and 'c.bias' "
                  "(offset 288) overlap");
}

TEST_F(GgufTest, RejectsMisalignedOffset) {
  auto b = small_gguf();
  b.tensors[2].offset = 400;
  EXPECT_CONTAINS(header_error(b),
                  "tensor 'c.bias' offset 400 is not a multiple of the alignment 32");
}

TEST_F(GgufTest, RejectsBadDims) {
  auto b = small_gguf();
  b.tensors[0].dims = {32, 0};
  b.tensors[0].data.clear();
  EXPECT_CONTAINS(header_error(b), "tensor 'a.weight' dimension 1 is 0");
  b = small_gguf();
  b.tensors[0].dims = {};
  EXPECT_CONTAINS(header_error(b), "tensor 'a.weight' has 0 dimensions (must be 1 to 4)");
  b = small_gguf();
  b.tensors[0].dims = {32, 1, 1, 1, 2};
  EXPECT_CONTAINS(header_error(b), "tensor 'a.weight' has 5 dimensions (must be 1 to 4)");
  b = small_gguf();
  b.tensors[0].dims = {uint64_t{1} << 40, uint64_t{1} << 40};
  EXPECT_CONTAINS(header_error(b), "tensor 'a.weight' element count overflows 64 bits");
  b = small_gguf();  // fits 64 bits as elements, not as bytes
  b.tensors[0].dims = {uint64_t{1} << 31, uint64_t{1} << 31, 2};
  EXPECT_CONTAINS(header_error(b), "tensor 'a.weight' byte size overflows 64 bits");
  b = small_gguf();  // huge but representable: fails on file bounds, allocates nothing
  b.tensors[0].dims = {uint64_t{1} << 20, uint64_t{1} << 20};
  EXPECT_CONTAINS(header_error(b), "tensor 'a.weight' data (offset 0 in the data section");
}

TEST_F(GgufTest, RejectsUnknownTypesAndBadBlocks) {
  for (uint32_t t : {4u, 31u, 77u}) {
    auto b = small_gguf();
    b.tensors[2].type = t;
    EXPECT_CONTAINS(header_error(b),
                    "tensor 'c.bias' has unknown tensor type " + std::to_string(t));
  }
  auto b = small_gguf();
  b.tensors[2] = {"c.bias", {16}, kQ4_0, filler(9), std::nullopt};
  EXPECT_CONTAINS(header_error(b),
                  "tensor 'c.bias' first dimension 16 is not a multiple of the Q4_0 block size 32");
  b = small_gguf();
  b.tensors[2] = {"c.bias", {32}, kQ6_K, filler(210), std::nullopt};
  EXPECT_CONTAINS(header_error(b), "not a multiple of the Q6_K block size 256");
}

TEST_F(GgufTest, AcceptsKnownUnsupportedTypesInHeader) {
  auto b = small_gguf();
  b.tensor("d.weight", {256, 2}, kQ6_K).tensor("e.weight", {32}, kQ8_0);
  auto h = read_gguf_header(write(b));
  EXPECT_EQ(h.tensors[3].type, kQ6_K);
  EXPECT_EQ(h.tensors[3].nbytes, 420u);
}

TEST_F(GgufTest, RejectsDuplicateAndEmptyNames) {
  auto b = small_gguf();
  b.tensors[2].name = "a.weight";
  EXPECT_CONTAINS(header_error(b), "duplicate tensor name 'a.weight'");
  b = small_gguf();
  b.tensors[1].name = "";
  EXPECT_CONTAINS(header_error(b), "tensor #1 has an empty name");
}

// Random byte flips and cuts: every outcome is a clean parse or a heron::Error.
TEST_F(GgufTest, SurvivesRandomCorruption) {
  auto b = small_gguf();
  b.kv("nested", kArr, Bytes().u32(kArr).u64(1).u32(kI16).u64(2).put<int16_t>(1).put<int16_t>(2));
  const auto good = b.build();
  std::mt19937 rng(1234);
  for (int iter = 0; iter < 1500; ++iter) {
    auto bytes = good;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      // Mostly in the header, where the structure is.
      size_t at = rng() % (rng() % 4 == 0 ? bytes.size() : std::min<size_t>(bytes.size(), 400));
      bytes[at] = static_cast<uint8_t>(rng());
    }
    if (rng() % 5 == 0) bytes.resize(rng() % bytes.size());
    write_file(path, bytes);
    try {
      read_gguf_header(path);
    } catch (const heron::Error& e) {
      ASSERT_TRUE(std::string(e.what()).starts_with(path + ": ")) << e.what();
    } catch (const std::exception& e) {
      FAIL() << "iteration " << iter << ": unexpected exception " << e.what();
    }
  }
}

}  // namespace
