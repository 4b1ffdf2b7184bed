// Qwen3-MoE (tests/fixtures/models/tiny-qwen3-moe, made by tools/make_tiny_qwen3_moe.py)
// beyond the logits ModelLogits compares: the experts stored stacked (mlx-lm's and GGUF's
// layout) give mlx-lm's logits too; a rollback and a restore from saved caches do; a GGUF
// gives llama.cpp's; `create --quantize` gives mlx-lm's logits on the same quantized
// weights and quantizes stacked experts exactly as it quantizes them one by one; broken
// files and configs are clear errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include <mlx/io.h>
#include <mlx/ops.h>
#include <mlx/random.h>
#include <mlx/transforms.h>
#include <nlohmann/json.hpp>

#include "heron/core/error.h"
#include "heron/model/layers/moe.h"
#include "heron/model/loader.h"
#include "heron/store/create.h"
#include "mlx_lm_reference.h"
#include "temp_model_dir.h"

namespace heron::model {
namespace {

namespace fs = std::filesystem;
namespace mx = mlx::core;

const std::string kModels = std::string(HERON_FIXTURES) + "/models/";
const std::string kMoe = kModels + "tiny-qwen3-moe";
const LoadOptions kLoad{.dtype = mx::float32, .load_tokenizer = false};
constexpr float kRelTol = 1e-4f;

test::MlxLmReference reference() {
  return test::mlx_lm_reference(kMoe);
}

float relative_error(const mx::array& ours, const mx::array& expected) {
  return test::relative_error_to(ours, expected);
}

// Logits of tokens [from, to) after the caches hold [0, from).
mx::array forward(const LoadedModel& m, cache::Caches& caches, const std::vector<int>& tokens,
                  int from, int to) {
  std::vector<int> part(tokens.begin() + from, tokens.begin() + to);
  return mx::squeeze(m.model->forward(Batch::single(part, from), caches).logits, 0);
}

mx::array rows(const mx::array& a, int from, int to) {
  return mx::slice(a, {from, 0}, {to, a.shape(1)});
}

// The fixture's config and tokenizer in a temporary directory.
struct TempModelDir : test::TempModelDir {
  explicit TempModelDir(const std::string& name) : test::TempModelDir(name, kMoe) {}
};

// The fixture's weights with each layer's experts stacked into mlp.switch_mlp.
std::unordered_map<std::string, mx::array> stacked_weights() {
  auto weights = mx::load_safetensors(kMoe + "/model.safetensors").first;
  std::map<std::string, std::map<int, mx::array>> experts;  // stacked name -> expert -> matrix
  std::unordered_map<std::string, mx::array> out;
  static const std::regex per_expert(R"((.*\.mlp)\.experts\.(\d+)\.(\w+_proj\.weight))");
  for (auto& [name, a] : weights) {
    std::smatch m;
    if (std::regex_match(name, m, per_expert)) {
      experts[m[1].str() + ".switch_mlp." + m[3].str()].emplace(std::stoi(m[2]), a);
    } else {
      out.emplace(name, a);
    }
  }
  for (auto& [name, by_expert] : experts) {
    std::vector<mx::array> parts;
    for (auto& [e, a] : by_expert) parts.push_back(a);
    out.emplace(name, mx::stack(parts, 0));
  }
  return out;
}

TEST(MixtureOfExperts, StackedExpertsGiveMlxLmsLogits) {
  TempModelDir dir("heron-moe-stacked");
  const auto stacked = stacked_weights();
  ASSERT_EQ(stacked.at("model.layers.0.mlp.switch_mlp.down_proj.weight").shape(),
            (mx::Shape{8, 64, 64}));
  dir.write_weights(stacked);
  const auto ref = reference();
  const auto m = load_model(dir.path(), kLoad);
  auto caches = m.model->make_caches();
  const int n = static_cast<int>(ref.tokens.size());
  EXPECT_LE(relative_error(forward(m, caches, ref.tokens, 0, n), ref.logits), kRelTol);
}

// A rejected draft rolled back, and a conversation restored from saved caches, continue
// with mlx-lm's logits (the experts keep no state of their own).
TEST(MixtureOfExperts, RollbackAndRestoreKeepMlxLmsLogits) {
  const auto ref = reference();
  const auto m = load_model(kMoe, kLoad);
  auto caches = m.model->make_caches();
  EXPECT_LE(relative_error(forward(m, caches, ref.tokens, 0, 30), rows(ref.logits, 0, 30)),
            kRelTol);
  for (auto& c : caches) c->rewind(4);
  EXPECT_LE(relative_error(forward(m, caches, ref.tokens, 26, 40), rows(ref.logits, 26, 40)),
            kRelTol);
  std::vector<cache::SegmentPtr> saved;
  for (auto& c : caches) saved.push_back(c->save(0, 40));
  auto restored = m.model->make_caches();
  for (size_t i = 0; i < restored.size(); ++i) restored[i]->load(*saved[i]);
  for (int at = 40; at < 64; ++at) {
    ASSERT_LE(
        relative_error(forward(m, restored, ref.tokens, at, at + 1), rows(ref.logits, at, at + 1)),
        kRelTol)
        << "position " << at;
  }
}

// A store holding models made by `create --quantize`.
class QuantizedStore {
 public:
  QuantizedStore() = default;
  ~QuantizedStore() { fs::remove_all(root_); }
  QuantizedStore(const QuantizedStore&) = delete;
  QuantizedStore& operator=(const QuantizedStore&) = delete;
  // Full-sequence logits of `from` quantized to `quant`.
  mx::array logits(const std::string& from, const std::string& quant) {
    std::string name = "m";  // not "m" + to_string(...): GCC 12 warns of a false overlap
    name += std::to_string(made_++);
    store::CreateRequest req;
    req.name = name;
    req.modelfile = store::parse_modelfile("FROM " + from + "\n");
    req.base_dir = kModels;
    req.quantize = quant;
    store::create_model(store_, req, nullptr);
    last_ = store::ModelName::parse(name);
    const auto ref = reference();
    const auto m = load();
    auto caches = m.model->make_caches();
    return forward(m, caches, ref.tokens, 0, static_cast<int>(ref.tokens.size()));
  }
  // The model made last.
  LoadedModel load() const { return load_model(store_.manifest_file(last_), kLoad); }

  // A file of the model made last, by its name in the manifest.
  fs::path file(const std::string& layer_name) const {
    const auto manifest = nlohmann::json::parse(std::ifstream(store_.manifest_file(last_)));
    for (const auto& layer : manifest.at("layers")) {
      if (layer.value("name", "") == layer_name) return store_.blob_path(layer.at("digest"));
    }
    throw std::runtime_error("no layer " + layer_name);
  }
  std::unordered_map<std::string, mx::array> tensors() const {
    return mx::load_safetensors(file("model.safetensors").string()).first;
  }

 private:
  static fs::path fresh_root() {
    auto root = fs::temp_directory_path() / ("heron-moe-store-" + std::to_string(getpid()));
    fs::remove_all(root);
    return root;
  }
  fs::path root_ = fresh_root();
  store::Store store_{root_};
  store::ModelName last_;
  int made_ = 0;
};

// Quantization moves this model's logits far (routing flips), so the quantized model is
// checked against mlx-lm running the same quantized weights (logits_int8, see
// tools/make_tiny_qwen3_moe.py): experts stored one per layer, quantized one by one.
TEST(MixtureOfExperts, CreateInt8GivesMlxLmsLogitsOnTheSameQuantizedWeights) {
  QuantizedStore store;
  const auto ours = store.logits("tiny-qwen3-moe", "int8");
  const auto expected =
      mx::load_safetensors(kMoe + "/reference_logits.safetensors").first.at("logits_int8");
  EXPECT_LE(relative_error(ours, expected), kRelTol);
  EXPECT_GT(relative_error(ours, reference().logits), 0.1f) << "were the weights quantized?";
  // Decode steps (on the CPU: every expert product of a step in one node) agree too.
  const auto ref = reference();
  const auto m = store.load();
  auto caches = m.model->make_caches();
  EXPECT_LE(relative_error(forward(m, caches, ref.tokens, 0, 25), rows(expected, 0, 25)), kRelTol);
  for (int at = 25; at < 64; ++at) {
    ASSERT_LE(
        relative_error(forward(m, caches, ref.tokens, at, at + 1), rows(expected, at, at + 1)),
        kRelTol)
        << "position " << at;
  }
}

// create stores experts stacked, as mlx-lm does, whichever way its source holds them, and
// quantizes each projection of all experts as one 3-D tensor.
TEST(MixtureOfExperts, CreateStacksAndQuantizesExpertsWhicheverWayTheSourceHoldsThem) {
  TempModelDir stacked_dir("heron-moe-stacked-source");
  stacked_dir.write_weights(stacked_weights());
  QuantizedStore store;
  for (const char* quant : {"int4", "mxfp4"}) {
    SCOPED_TRACE(quant);
    const auto separate = store.logits("tiny-qwen3-moe", quant);
    const auto stored = store.tensors();
    EXPECT_EQ(stored.at("model.layers.0.mlp.switch_mlp.gate_proj.weight").ndim(), 3);
    EXPECT_EQ(stored.count("model.layers.0.mlp.experts.0.gate_proj.weight"), 0u);
    const auto stacked = store.logits(stacked_dir.path().string(), quant);
    EXPECT_LE(relative_error(stacked, separate), 1e-5f);
    EXPECT_GT(relative_error(separate, reference().logits), 0.1f) << "were they quantized?";
  }
}

// Quantized experts stored one per layer (as some converters write them) load as the
// same model: the loader stacks each expert's weight, scales and biases.
TEST(MixtureOfExperts, ExpertsQuantizedOneByOneLoadLikeStackedOnes) {
  QuantizedStore store;
  const auto stacked = store.logits("tiny-qwen3-moe", "int8");
  TempModelDir dir("heron-moe-quantized-separately");
  fs::copy_file(store.file("config.json"), dir.path() / "config.json",
                fs::copy_options::overwrite_existing);
  static const std::regex switch_mlp(R"((.*\.mlp)\.switch_mlp\.(.*))");
  std::unordered_map<std::string, mx::array> separate;
  for (const auto& [name, a] : store.tensors()) {
    std::smatch m;
    if (!std::regex_match(name, m, switch_mlp)) {
      separate.emplace(name, a);
      continue;
    }
    for (int e = 0; e < a.shape(0); ++e) {
      separate.emplace(m[1].str() + ".experts." + std::to_string(e) + "." + m[2].str(),
                       mx::squeeze(mx::slice(a, {e, 0, 0}, {e + 1, a.shape(1), a.shape(2)}), 0));
    }
  }
  ASSERT_EQ(separate.count("model.layers.2.mlp.experts.7.up_proj.scales"), 1u);
  dir.write_weights(separate);
  const auto m = load_model(dir.path(), kLoad);
  const auto ref = reference();
  auto caches = m.model->make_caches();
  const int n = static_cast<int>(ref.tokens.size());
  EXPECT_LE(relative_error(forward(m, caches, ref.tokens, 0, n), stacked), 1e-6f);
}

// The same experts in llama.cpp's qwen3moe GGUF layout (router ffn_gate_inp, stacked
// ffn_*_exps; tools/make_tiny_qwen3_moe.py, without the dense layer llama.cpp's qwen3moe
// cannot hold) give llama.cpp's logits. The bound covers the two engines' float32
// summation orders (measured: see the printout), far below what a misrouted token or an
// unnormalized expert weight moves.
TEST(MixtureOfExperts, GgufGivesLlamaCppsLogits) {
  const std::string gguf = std::string(HERON_FIXTURES) + "/gguf/tiny-qwen3-moe";
  auto ref = mx::load_safetensors(gguf + ".llamacpp.safetensors").first;
  auto t = mx::astype(ref.at("tokens"), mx::int32);
  mx::eval(t);
  const std::vector<int> tokens(t.data<int32_t>(), t.data<int32_t>() + t.size());
  const auto m = load_model(gguf + ".gguf", kLoad);
  EXPECT_EQ(m.model->config().num_experts, 8);
  EXPECT_EQ(m.model->config().num_layers, 2);
  auto caches = m.model->make_caches();
  const int n = static_cast<int>(tokens.size());
  const float err = relative_error(forward(m, caches, tokens, 0, n), ref.at("logits"));
  std::printf("relative error against llama.cpp: %.3g\n", err);
  EXPECT_LE(err, 1e-3f);
}

// Experts in groups of 16 (GGUF's K-quant sub-blocks) at a width no kernel of ours takes
// (6 bits) go through the dequantizing fallback, for decode's few rows and for many rows;
// the reference is MLX's gather_qmm on the same values held in groups of 32 (each
// group-16 scale and bias repeats its group-32 one).
TEST(MixtureOfExperts, GroupsOf16FallBackToDequantizedExperts) {
  const int experts = 6, out = 40, in = 128;
  const auto w32 =
      mx::quantize(mx::random::normal({experts, out, in}, mx::float32, mx::random::key(5)), 32, 6);
  auto twice = [](const mx::array& a) { return mx::repeat(a, 2, -1); };
  io::WeightMap map{{"p.switch_mlp.gate_proj.weight", w32[0]},
                    {"p.switch_mlp.gate_proj.scales", twice(w32[1])},
                    {"p.switch_mlp.gate_proj.biases", twice(w32[2])}};
  Weights w(std::move(map), "test", 16, mx::float32);
  const auto layer = SwitchLinear::load(w, "p", "gate_proj", experts);
  auto check = [&](const mx::array& x, const mx::array& idx, bool sorted) {
    const auto ours = layer(x, idx, sorted);
    const auto ref = mx::gather_qmm(x, w32[0], w32[1], w32[2], std::nullopt, idx, true, 32, 6,
                                    "affine", std::nullopt, sorted);
    EXPECT_EQ(ours.shape(), ref.shape());
    EXPECT_LE(relative_error(ours, ref), 1e-5f);
  };
  const auto decode_idx = mx::array({3u, 1u}, {1, 1, 2});
  check(mx::random::normal({1, 1, 1, 1, in}, mx::float32, mx::random::key(6)), decode_idx, false);
  const auto many = mx::sort(
      mx::astype(mx::random::randint(0, experts, {24}, mx::int32, mx::random::key(7)), mx::uint32));
  check(mx::random::normal({24, 1, in}, mx::float32, mx::random::key(8)), many, true);
}

TEST(MixtureOfExperts, BrokenFilesAndConfigsAreClearErrors) {
  TempModelDir dir("heron-moe-broken");
  auto weights = mx::load_safetensors(kMoe + "/model.safetensors").first;
  auto without = weights;
  without.erase("model.layers.2.mlp.experts.5.up_proj.weight");
  dir.write_weights(without);
  EXPECT_NE(dir.load_error().find("model.layers.2.mlp.experts.5.up_proj.weight"), std::string::npos)
      << dir.load_error();

  dir.write_weights(weights);
  dir.edit_config([](nlohmann::json& c) { c["num_experts"] = 6; });
  EXPECT_NE(dir.load_error().find("routes to 8 experts, the config says 6"), std::string::npos)
      << dir.load_error();

  dir.edit_config([](nlohmann::json& c) {
    c["num_experts"] = 8;
    c["num_experts_per_tok"] = 9;
  });
  EXPECT_NE(dir.load_error().find("'num_experts_per_tok' = 9 is out of range"), std::string::npos)
      << dir.load_error();

  dir.edit_config([](nlohmann::json& c) {
    c["num_experts_per_tok"] = 2;
    c["mlp_only_layers"] = {7};
  });
  EXPECT_NE(dir.load_error().find("'mlp_only_layers' holds 7, not a layer index"),
            std::string::npos)
      << dir.load_error();
}

}  // namespace
}  // namespace heron::model
