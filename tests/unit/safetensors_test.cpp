// safetensors header reader: a valid file, then every kind of corrupt header.
#include <gtest/gtest.h>

#include <random>

#include <nlohmann/json.hpp>

#include "heron/io/safetensors.h"
#include "model_file_writers.h"

namespace {
using namespace heron::test;
using heron::io::read_safetensors_header;
using nlohmann::json;

// Header and data of a valid two-tensor file: w F32 [2,3] at [0,24), b I8 [4] at [24,28).
struct StFile {
  json header = {
      {"__metadata__", {{"format", "mlx"}}},
      {"w", {{"dtype", "F32"}, {"shape", {2, 3}}, {"data_offsets", {0, 24}}}},
      {"b", {{"dtype", "I8"}, {"shape", {4}}, {"data_offsets", {24, 28}}}},
  };
  std::vector<uint8_t> data = filler(28);
};

struct SafetensorsTest : ::testing::Test {
  TempDir dir;
  std::string path = dir.file("model.safetensors");
  std::string error_for(const StFile& f) { return error_for(f.header.dump(), f.data); }
  std::string error_for(const std::string& header, const std::vector<uint8_t>& data) {
    write_file(path, safetensors_bytes(header, data));
    return error_of([&] { read_safetensors_header(path); });
  }
};

TEST_F(SafetensorsTest, ReadsValidFile) {
  StFile f;
  auto header = f.header.dump();
  write_file(path, safetensors_bytes(header, f.data));
  auto h = read_safetensors_header(path);
  EXPECT_EQ(h.path, path);
  EXPECT_EQ(h.data_offset, 8 + header.size());
  EXPECT_EQ(h.metadata, (json{{"format", "mlx"}}));
  ASSERT_EQ(h.tensors.size(), 2u);
  const auto& w = h.tensors[0].name == "w" ? h.tensors[0] : h.tensors[1];
  EXPECT_EQ(w.dtype, "F32");
  EXPECT_EQ(w.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(w.begin, 0u);
  EXPECT_EQ(w.end, 24u);
}

TEST_F(SafetensorsTest, AcceptsScalarsEmptyTensorsAndNoMetadata) {
  json header = {{"s", {{"dtype", "BF16"}, {"shape", json::array()}, {"data_offsets", {0, 2}}}},
                 {"e", {{"dtype", "F16"}, {"shape", {0, 5}}, {"data_offsets", {2, 2}}}}};
  write_file(path, safetensors_bytes(header.dump(), filler(2)));
  auto h = read_safetensors_header(path);
  EXPECT_EQ(h.metadata, json::object());
  EXPECT_EQ(h.tensors.size(), 2u);
  // MLX's save_safetensors writes "__metadata__": null when given none.
  header["__metadata__"] = nullptr;
  write_file(path, safetensors_bytes(header.dump(), filler(2)));
  EXPECT_EQ(read_safetensors_header(path).metadata, json::object());
}

TEST_F(SafetensorsTest, RejectsBadHeaderLengths) {
  write_file(path, std::vector<uint8_t>{1, 2, 3});
  EXPECT_CONTAINS(error_of([&] { read_safetensors_header(path); }),
                  path + ": file is truncated: reading the header length");
  auto bytes = safetensors_bytes(StFile().header.dump(), {});
  bytes[0] = 0xff;  // length now exceeds the file
  bytes[1] = 0xff;
  write_file(path, bytes);
  EXPECT_CONTAINS(error_of([&] { read_safetensors_header(path); }), "header length 65535");
  for (uint64_t len : {uint64_t{0}, uint64_t{100'000'001}, ~uint64_t{0}}) {
    Bytes b;
    b.u64(len).raw(filler(64));
    write_file(path, b.b);
    EXPECT_CONTAINS(error_of([&] { read_safetensors_header(path); }),
                    "header length " + std::to_string(len) + " is invalid");
  }
}

TEST_F(SafetensorsTest, RejectsBadJson) {
  EXPECT_CONTAINS(error_for("{\"w\": {", filler(4)), path + ": header is not valid JSON");
  EXPECT_CONTAINS(error_for("[1, 2]", {}), "header is not a JSON object");
  EXPECT_CONTAINS(error_for(std::string("{\"\xff\": 1}"), {}), "header is not valid JSON");
  std::string dup = R"({"w": {"dtype": "I8", "shape": [1], "data_offsets": [0, 1]},)"
                    R"( "w": {"dtype": "I8", "shape": [1], "data_offsets": [1, 2]}})";
  EXPECT_CONTAINS(error_for(dup, filler(2)), "header repeats the key 'w'");
}

TEST_F(SafetensorsTest, RejectsBadEntries) {
  StFile f;
  f.header["w"] = 5;
  EXPECT_CONTAINS(error_for(f), "tensor 'w' entry is not a JSON object");
  f = StFile();
  f.header["w"].erase("dtype");
  EXPECT_CONTAINS(error_for(f), "tensor 'w' has no dtype string");
  for (const char* dtype : {"F7", "F8_E4M3", "F8_E5M2", "f32"}) {
    f = StFile();
    f.header["w"]["dtype"] = dtype;
    EXPECT_CONTAINS(error_for(f), std::string("tensor 'w' has unsupported dtype '") + dtype + "'");
  }
  f = StFile();
  f.header["w"].erase("shape");
  EXPECT_CONTAINS(error_for(f), "tensor 'w' has no shape array");
  f = StFile();
  f.header["w"]["shape"] = {2, -3};
  EXPECT_CONTAINS(error_for(f), "tensor 'w' shape entry must be a non-negative integer, got -3");
  f = StFile();
  f.header["w"]["shape"] = {2, 3.0};
  EXPECT_CONTAINS(error_for(f), "tensor 'w' shape entry must be a non-negative integer");
  f = StFile();
  f.header["w"]["shape"] = {uint64_t{1} << 62, uint64_t{1} << 62};
  EXPECT_CONTAINS(error_for(f), "tensor 'w' element count overflows");
  f = StFile();
  f.header["w"]["shape"] = {uint64_t{1} << 62};  // elements fit, bytes do not
  EXPECT_CONTAINS(error_for(f), "tensor 'w' byte size overflows");
  f = StFile();
  f.header["w"].erase("data_offsets");
  EXPECT_CONTAINS(error_for(f), "tensor 'w' needs data_offsets [begin, end]");
  f = StFile();
  f.header["w"]["data_offsets"] = {0, 24, 30};
  EXPECT_CONTAINS(error_for(f), "tensor 'w' needs data_offsets [begin, end]");
  f = StFile();
  f.header["w"]["data_offsets"] = {24, 0};
  EXPECT_CONTAINS(error_for(f), "tensor 'w' data_offsets begin is after end");
}

TEST_F(SafetensorsTest, RejectsSizeMismatch) {
  StFile f;
  f.header["w"]["shape"] = {2, 4};
  EXPECT_CONTAINS(error_for(f),
                  "tensor 'w' data_offsets [0, 24] span 24 bytes but its shape and "
                  "dtype need 32");
  f = StFile();
  f.header["w"]["dtype"] = "F16";
  EXPECT_CONTAINS(error_for(f), "need 12");
}

TEST_F(SafetensorsTest, RejectsOffsetsPastEnd) {
  StFile f;
  f.data.resize(27);
  EXPECT_CONTAINS(error_for(f),
                  "tensor 'b' data_offsets end 28 runs past the end of the data "
                  "section (27 bytes)");
}

TEST_F(SafetensorsTest, RejectsOverlap) {
  StFile f;
  f.header["b"]["data_offsets"] = {20, 24};
  EXPECT_CONTAINS(error_for(f), "tensors 'w' and 'b' overlap in the data section");
}

TEST_F(SafetensorsTest, RejectsBadMetadata) {
  StFile f;
  f.header["__metadata__"] = {{"n", 3}};
  EXPECT_CONTAINS(error_for(f), "__metadata__ value 'n' is not a string");
  f.header["__metadata__"] = "x";
  EXPECT_CONTAINS(error_for(f), "__metadata__ is not a JSON object");
}

// Random byte flips and cuts: every outcome is a clean parse or a heron::Error.
TEST_F(SafetensorsTest, SurvivesRandomCorruption) {
  StFile f;
  const auto good = safetensors_bytes(f.header.dump(), f.data);
  std::mt19937 rng(99);
  for (int iter = 0; iter < 1500; ++iter) {
    auto bytes = good;
    int flips = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < flips; ++k) bytes[rng() % bytes.size()] = static_cast<uint8_t>(rng());
    if (rng() % 5 == 0) bytes.resize(rng() % bytes.size());
    write_file(path, bytes);
    try {
      read_safetensors_header(path);
    } catch (const heron::Error& e) {
      ASSERT_TRUE(std::string(e.what()).starts_with(path + ": ")) << e.what();
    } catch (const std::exception& e) {
      FAIL() << "iteration " << iter << ": unexpected exception " << e.what();
    }
  }
}

}  // namespace
