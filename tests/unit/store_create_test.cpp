// create_model + the loader: a stored float model and its stored draft load from one
// manifest and reproduce mlx-lm's reference logits of their source directories; a model
// quantized by create stays within a stated distance of those float logits.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include <mlx/io.h>
#include <mlx/ops.h>
#include <mlx/transforms.h>

#include "heron/core/error.h"
#include "heron/model/loader.h"
#include "heron/store/create.h"

namespace heron::store {
namespace {

namespace fs = std::filesystem;
namespace mx = mlx::core;

const std::string kModels = std::string(HERON_FIXTURES) + "/models/";

float max_relative_error(const std::string& model_dir, const fs::path& path, bool draft) {
  auto ref = mx::load_safetensors(model_dir + "/reference_logits.safetensors").first;
  auto t = mx::astype(ref.at("tokens"), mx::int32);
  mx::eval(t);
  std::vector<int> tokens(t.data<int32_t>(), t.data<int32_t>() + t.size());
  auto loaded = model::load_model(
      path, model::LoadOptions{.dtype = mx::float32, .load_tokenizer = false, .draft = draft});
  auto caches = loaded.model->make_caches();
  auto logits =
      mx::squeeze(loaded.model->forward(model::Batch::single(tokens, 0), caches).logits, 0);
  const auto& expected = ref.at("logits");
  return mx::max(mx::abs(mx::subtract(logits, expected))).item<float>() /
         mx::max(mx::abs(expected)).item<float>();
}

fs::path fresh_store_dir() {
  const fs::path root =
      fs::temp_directory_path() / ("heron-create-test-" + std::to_string(getpid()));
  fs::remove_all(root);
  return root;
}

TEST(StoreCreate, TargetAndDraftLoadFromOneManifest) {
  const fs::path root = fresh_store_dir();
  Store store(root);
  CreateRequest req;
  req.name = "pair";
  req.modelfile = parse_modelfile("FROM tiny-llama\nDRAFT tiny-qwen3\n");
  req.base_dir = kModels;
  std::vector<std::string> statuses;
  create_model(store, req, [&](const Progress& p) { statuses.push_back(p.status); });
  EXPECT_EQ(statuses.front(), "parsing modelfile");
  EXPECT_EQ(statuses.back(), "success");
  const auto manifest = store.manifest_file(ModelName::parse("pair"));
  EXPECT_LE(max_relative_error(kModels + "tiny-llama", manifest, false), 1e-4f);
  EXPECT_LE(max_relative_error(kModels + "tiny-qwen3", manifest, true), 1e-4f);
  // A model without a draft says so.
  req.name = "single";
  req.modelfile = parse_modelfile("FROM tiny-llama\n");
  create_model(store, req, nullptr);
  EXPECT_THROW(model::load_model(store.manifest_file(ModelName::parse("single")),
                                 {.load_tokenizer = false, .draft = true}),
               Error);
  fs::remove_all(root);
}

// How far each quantization mode may move the logits of the float model, as
// max |quantized - float| / max |float| over all 64 x 512 logits of the reference
// sequence. The float logits are mlx-lm's (tools/make_reference_logits.py), so the
// reference is independent of heron. A weight's rounding error is about half a
// quantization step: affine int8 has 255 steps per group of 64 and int4 15 (17x
// coarser, though create keeps the head, k/v_proj and down_proj at 8 bits); mxfp8 (E4M3,
// 3 mantissa bits, a power-of-two scale per 32) moves a weight by up to 1/16 of its
// value, mxfp4 and nvfp4 (E2M1, 1 mantissa bit) by up to 1/4 (nvfp4 with a finer FP8
// scale per 16). Rounding is deterministic, so the errors only change with MLX's
// quantizer; each bound is about twice the value MLX 0.32 gives (in the comments).
// Logits that carried nothing of the float model's (all zeros) score 1.0, and a
// quantizer or loader that misplaces scales, groups or modes produces weights
// uncorrelated with the originals, so the bounds (at most 0.3) catch those: storing every
// scales tensor rolled by one row (tried once) gave 0.69 to 3.1 in all ten cases.
struct QuantCase {
  const char* model;
  const char* quant;
  float max_rel_error;
};

void PrintTo(const QuantCase& c, std::ostream* os) {
  *os << c.model << " " << c.quant;
}

class QuantizedLogits : public ::testing::TestWithParam<QuantCase> {};

TEST_P(QuantizedLogits, StayNearTheFloatModel) {
  const auto& c = GetParam();
  const fs::path root = fresh_store_dir();
  Store store(root);
  CreateRequest req;
  req.name = "q";
  req.modelfile = parse_modelfile(std::string("FROM ") + c.model + "\n");
  req.base_dir = kModels;
  req.quantize = c.quant;
  create_model(store, req, nullptr);
  const float err =
      max_relative_error(kModels + c.model, store.manifest_file(ModelName::parse("q")), false);
  std::printf("%s %s: max relative logit error %.4g (bound %.3g)\n", c.model, c.quant, err,
              c.max_rel_error);
  EXPECT_LE(err, c.max_rel_error);
  EXPECT_GT(err, 1e-4f) << "no larger than float32 noise: were the weights quantized at all?";
  fs::remove_all(root);
}

INSTANTIATE_TEST_SUITE_P(EveryMode, QuantizedLogits,
                         ::testing::Values(QuantCase{"tiny-llama", "int8", 0.02f},    // 0.0099
                                           QuantCase{"tiny-llama", "int4", 0.3f},     // 0.139
                                           QuantCase{"tiny-llama", "mxfp8", 0.12f},   // 0.061
                                           QuantCase{"tiny-llama", "mxfp4", 0.3f},    // 0.172
                                           QuantCase{"tiny-llama", "nvfp4", 0.3f},    // 0.167
                                           QuantCase{"tiny-qwen3", "int8", 0.02f},    // 0.0075
                                           QuantCase{"tiny-qwen3", "int4", 0.15f},    // 0.077
                                           QuantCase{"tiny-qwen3", "mxfp8", 0.07f},   // 0.035
                                           QuantCase{"tiny-qwen3", "mxfp4", 0.22f},   // 0.107
                                           QuantCase{"tiny-qwen3", "nvfp4", 0.26f}),  // 0.129
                         [](const ::testing::TestParamInfo<QuantCase>& p) {
                           std::string n = std::string(p.param.model) + "_" + p.param.quant;
                           for (auto& ch : n) ch = ch == '-' ? '_' : ch;
                           return n;
                         });

}  // namespace
}  // namespace heron::store
