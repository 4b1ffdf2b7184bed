// Continuous batching's forward (model/batched_forward.h): several sequences packed in one
// forward, each row with its own caches, gives every row the logits it gets alone, on
// every architecture: rows at different offsets and prompt lengths, a prompt's chunk
// beside rows that decode one token, rows that leave and rows that join, sliding windows
// that wrap and recurrent states. The reference is each sequence run alone through the
// same chunks on caches of its own.
#include <gtest/gtest.h>
#include <mlx/mlx.h>

#include <algorithm>
#include <string>
#include <vector>

#include "heron/core/error.h"
#include "heron/model/batched_forward.h"
#include "heron/model/loader.h"
#include "mlx_lm_reference.h"
#include "test_precision.h"

namespace heron::model {
namespace {

namespace mx = mlx::core;

const std::string kModels = std::string(HERON_FIXTURES) + "/models/";
const test::Precision kPrecision = test::test_precision();
const LoadOptions kLoad{.dtype = kPrecision.dtype, .load_tokenizer = false};

// One sequence: its tokens, how many have been run, and the caches of its batched run
// and of its run alone.
struct Sequence {
  std::vector<int> tokens;
  int done = 0;
  cache::Caches batched, alone;
};

// One row of a step: sequence `seq` runs its next `count` tokens.
struct Part {
  size_t seq;
  int count;
};

class BatchedForward : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const auto dir = kModels + GetParam();
    loaded_ = load_model(dir, kLoad);
    const auto ref = test::mlx_lm_reference(dir).tokens;
    // Four different sequences from the reference's tokens: the tokens, a rotation, a
    // reversal and a suffix, so no two rows see the same context.
    std::vector<std::vector<int>> texts(3, ref);
    std::rotate(texts[1].begin(), texts[1].begin() + 17, texts[1].end());
    std::reverse(texts[2].begin(), texts[2].end());
    texts.emplace_back(ref.begin() + 9, ref.end());
    for (auto& t : texts) {
      auto& s = seqs_.emplace_back();
      s.tokens = t;
      s.batched = loaded_.model->make_caches();
      s.alone = loaded_.model->make_caches();
    }
  }

  // Runs one batched forward of `parts` and compares each row's logits with the same
  // tokens run alone.
  void step(const std::vector<Part>& parts, LogitsFor logits_for = LogitsFor::All) {
    std::vector<std::vector<int>> tokens;
    std::vector<int> offsets;
    std::vector<cache::Caches*> rows;
    for (const auto& p : parts) {
      auto& s = seqs_[p.seq];
      tokens.emplace_back(s.tokens.begin() + s.done, s.tokens.begin() + s.done + p.count);
      offsets.push_back(s.done);
      rows.push_back(&s.batched);
    }
    const auto& model = *loaded_.model;
    auto logits = forward_rows(model, Batch::rows(tokens, offsets, logits_for), rows).logits;
    const bool last = logits_for == LogitsFor::Last;
    int start = 0;  // of the row's tokens in the packed batch
    for (size_t r = 0; r < parts.size(); ++r) {
      auto& s = seqs_[parts[r].seq];
      auto alone = model.forward(Batch::single(tokens[r], s.done, logits_for), s.alone).logits;
      const auto row = static_cast<int>(r);
      const int V = logits.shape(2);
      // Each row's last token's logits, one row each, or every token's, packed.
      auto ours = last ? mx::slice(logits, {row, 0, 0}, {row + 1, 1, V})
                       : mx::slice(logits, {0, start, 0}, {1, start + parts[r].count, V});
      start += parts[r].count;
      const float err = test::relative_error_to(ours, mx::astype(alone, mx::float32));
      EXPECT_LE(err, kPrecision.logits_rel_tol)
          << "row " << r << " (sequence " << parts[r].seq << ") at " << s.done;
      // And the same greedy token at every position.
      EXPECT_TRUE(mx::array_equal(mx::argmax(ours, -1), mx::argmax(alone, -1)).item<bool>())
          << "row " << r << " at " << s.done;
      s.done += parts[r].count;
    }
  }

  LoadedModel loaded_;
  std::vector<Sequence> seqs_;
};

TEST_P(BatchedForward, EveryRowGetsTheLogitsItGetsAlone) {
  // Prompts of different lengths together.
  step({{0, 12}, {1, 5}, {2, 20}});
  // A prompt's next chunk beside rows that decode.
  step({{0, 1}, {1, 7}, {2, 1}});
  // Decode steps, all rows one token; sequence 1 leaves after two.
  for (int i = 0; i < 2; ++i) step({{0, 1}, {1, 1}, {2, 1}});
  for (int i = 0; i < 3; ++i) step({{0, 1}, {2, 1}});
  // Sequence 3 joins with its prompt, in a row before the others.
  step({{3, 9}, {0, 1}, {2, 1}});
  // Prompts that want only their last token's logits (a prefill chunk's).
  step({{3, 6}, {0, 3}, {2, 1}}, LogitsFor::Last);
  // Decoding on past the sliding windows (tiny-gemma3's is 8, tiny-gpt-oss's 4).
  for (int i = 0; i < 6; ++i) step({{2, 1}, {3, 1}, {0, 1}});
}

INSTANTIATE_TEST_SUITE_P(TinyModels, BatchedForward,
                         ::testing::Values("tiny-llama", "tiny-qwen3", "tiny-gemma3",
                                           "tiny-qwen3-moe", "tiny-gpt-oss", "tiny-glm4-moe-lite",
                                           "tiny-qwen3-next", "tiny-qwen3-5-moe"),
                         [](const auto& param_info) {
                           std::string name = param_info.param.substr(5);  // no "tiny-"
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(BatchedForwardInput, ABatchThatDoesNotFitItsCachesIsAClearError) {
  auto loaded = load_model(kModels + "tiny-llama", kLoad);
  auto a = loaded.model->make_caches();
  auto b = loaded.model->make_caches();
  const std::vector<cache::Caches*> two{&a, &b};
  // Three rows, two sequences' caches.
  auto batch = Batch::rows({{1, 2}, {3}, {4, 5, 6}}, {0, 0, 0});
  EXPECT_THROW(forward_rows(*loaded.model, batch, two), Error);
  EXPECT_THROW(Batch::rows({{1, 2}, {}}, {0, 0}), Error);
  EXPECT_THROW(Batch::rows({{1, 2}, {3}}, {0}), Error);
  EXPECT_THROW(Batch::rows({}, {}), Error);
  cache::Caches one_layer;
  one_layer.push_back(std::move(b[0]));
  EXPECT_THROW(forward_rows(*loaded.model, Batch::rows({{1}, {2}}, {0, 0}), {&a, &one_layer}),
               Error);
}

}  // namespace
}  // namespace heron::model
