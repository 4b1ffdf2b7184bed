// create_model + the loader: a stored float model and its stored draft load from one
// manifest and reproduce mlx-lm's reference logits of their source directories.
#include <gtest/gtest.h>
#include <unistd.h>

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

TEST(StoreCreate, TargetAndDraftLoadFromOneManifest) {
  const fs::path root =
      fs::temp_directory_path() / ("heron-create-test-" + std::to_string(getpid()));
  fs::remove_all(root);
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

}  // namespace
}  // namespace heron::store
