// The depth controller against simulated drafters and machines: it must find the depth
// that maximizes committed tokens per second (within 10% of the best fixed depth, which
// the simulation knows), never do worse than plain decoding, and follow a drafter whose
// acceptance changes. Each simulation is seeded, so the figures are fixed.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "heron/core/error.h"
#include "heron/spec/depth_controller.h"

using heron::spec::DepthController;

namespace {

// A drafter whose k-th draft is accepted with probability `accept` once the ones before
// it were, on a machine where a plain step costs 1, a verify of width w costs
// verify_base + verify_slope * (w - 1) and drafting costs draft_step per token.
struct World {
  double accept;
  double plain = 1.0;
  double verify_base = 1.05;
  double verify_slope = 0.02;
  double draft_step = 0;

  double verify(int width) const { return verify_base + verify_slope * (width - 1); }
  // Expected committed tokens per unit of time at a fixed depth.
  double rate(int depth) const {
    if (depth == 0) return 1.0 / plain;
    double expected = 1, product = 1;
    for (int k = 1; k <= depth; ++k) expected += (product *= accept);
    return expected / (depth * draft_step + verify(depth + 1));
  }
  double best_rate(int max_depth) const {
    double best = 0;
    for (int n = 0; n <= max_depth; ++n) best = std::max(best, rate(n));
    return best;
  }
};

struct Run {
  double tokens = 0, seconds = 0;
  std::vector<int> depths;
  double rate() const { return tokens / seconds; }
};

constexpr int kMaxDepth = 16;

Run simulate(DepthController& controller, const World& world, int rounds, std::mt19937& rng) {
  std::bernoulli_distribution coin(world.accept);
  Run run;
  for (int r = 0; r < rounds; ++r) {
    const int depth = controller.choose(kMaxDepth);
    run.depths.push_back(depth);
    if (depth == 0) {
      controller.observe_plain(world.plain);
      run.tokens += 1;
      run.seconds += world.plain;
      continue;
    }
    int accepted = 0;
    while (accepted < depth && coin(rng)) ++accepted;
    const double draft = depth * world.draft_step, verify = world.verify(depth + 1);
    controller.observe_round(depth, accepted, draft, verify);
    run.tokens += accepted + 1;
    run.seconds += draft + verify;
  }
  return run;
}

// Warm up, then measure the controller's throughput against the best fixed depth.
Run settled(const World& world, DepthController& controller, std::mt19937& rng) {
  simulate(controller, world, 300, rng);
  return simulate(controller, world, 2000, rng);
}

int median_depth(std::vector<int> depths) {
  std::nth_element(depths.begin(), depths.begin() + depths.size() / 2, depths.end());
  return depths[depths.size() / 2];
}

}  // namespace

TEST(DepthController, GoesDeepWhenVerifyingIsFlatAndDraftsAreGood) {
  std::mt19937 rng(1);
  const World world{.accept = 0.9};
  DepthController controller;
  const auto run = settled(world, controller, rng);
  EXPECT_GE(median_depth(run.depths), 6);
  EXPECT_GT(run.rate(), 0.9 * world.best_rate(kMaxDepth));
}

TEST(DepthController, StaysShallowWhenVerifyingIsSteep) {
  std::mt19937 rng(2);
  const World world{.accept = 0.8, .verify_slope = 0.5};
  DepthController controller;
  const auto run = settled(world, controller, rng);
  EXPECT_LE(median_depth(run.depths), 2);
  EXPECT_GE(median_depth(run.depths), 1);
  EXPECT_GT(run.rate(), 0.9 * world.best_rate(kMaxDepth));
}

TEST(DepthController, TurnsSpeculationOffWhenDraftsAreRejected) {
  std::mt19937 rng(3);
  const World world{.accept = 0.05};
  DepthController controller;
  const auto run = settled(world, controller, rng);
  EXPECT_EQ(median_depth(run.depths), 0);
  // Only the occasional probe speculates: never worse than plain decoding by more than
  // the probes' share.
  EXPECT_GT(run.rate(), 0.97 * world.rate(0));
}

TEST(DepthController, CountsTheDraftersOwnCost) {
  std::mt19937 rng(4);
  // A draft model as dear as half a verify: depth is worth it only while drafts are good.
  const World world{.accept = 0.8, .draft_step = 0.3};
  DepthController controller;
  const auto run = settled(world, controller, rng);
  EXPECT_GT(run.rate(), 0.9 * world.best_rate(kMaxDepth));
  EXPECT_LE(median_depth(run.depths), 5);
}

TEST(DepthController, FollowsAcceptanceThatChanges) {
  std::mt19937 rng(5);
  DepthController controller;
  const World good{.accept = 0.9}, bad{.accept = 0.05};
  settled(good, controller, rng);
  const auto after_drop = simulate(controller, bad, 400, rng);
  // Within 100 rounds of the drop it is decoding plainly again.
  EXPECT_EQ(median_depth({after_drop.depths.begin() + 100, after_drop.depths.end()}), 0);
  const auto after_recovery = simulate(controller, good, 600, rng);
  EXPECT_GE(median_depth({after_recovery.depths.begin() + 300, after_recovery.depths.end()}), 6);
}

TEST(DepthController, FixedDepthIsObeyedAndCapped) {
  DepthController controller({.fixed_depth = 5});
  EXPECT_EQ(controller.choose(16), 5);
  EXPECT_EQ(controller.choose(3), 3);
  EXPECT_EQ(controller.choose(0), 0);
}

TEST(DepthController, CostsRoundTripAndBadTablesAreRefused) {
  std::mt19937 rng(6);
  DepthController trained;
  settled({.accept = 0.9, .verify_slope = 0.1}, trained, rng);
  DepthController fresh;
  fresh.load_costs(trained.costs());
  EXPECT_EQ(fresh.costs(), trained.costs());
  for (const char* bad :
       {R"([])", R"({"version": 2, "verify": {}})", R"({"version": 1})",
        R"({"version": 1, "verify": {"x": 1.0}})", R"({"version": 1, "verify": {"0": 1.0}})",
        R"({"version": 1, "verify": {"2": -1.0}})", R"({"version": 1, "verify": {"2": "fast"}})",
        R"({"version": 1, "verify": {}, "plain": null})"}) {
    EXPECT_THROW(fresh.load_costs(nlohmann::json::parse(bad)), heron::Error) << bad;
  }
  EXPECT_EQ(fresh.costs(), trained.costs());  // a refused table changes nothing
}

TEST(DepthController, TimesPlainDecodingBeforeSpeculating) {
  // A CPU where verifying two positions costs 1.6 plain steps and drafts are accepted
  // 40% of the time: speculation loses at every depth. A drafter that always proposes
  // leaves the controller no plain step to time unless it asks for one.
  const World cpu{.accept = 0.4,
                  .plain = 0.013,
                  .verify_base = 0.021,
                  .verify_slope = 0.004,
                  .draft_step = 0.0015};
  DepthController controller;
  EXPECT_EQ(controller.choose(16), 0);
  std::mt19937 rng(3);
  const auto run = settled(cpu, controller, rng);
  EXPECT_EQ(median_depth(run.depths), 0);
  EXPECT_GE(run.rate(), 0.9 * cpu.best_rate(kMaxDepth));
}

TEST(DepthController, StartsModestlyAndGrowsAsDepthsAreMeasured) {
  DepthController controller;
  EXPECT_LE(controller.choose(16), 4);  // nothing measured: no deep guess
  std::mt19937 rng(7);
  const World flat{.accept = 0.95};
  const auto early = simulate(controller, flat, 30, rng);
  EXPECT_GE(*std::max_element(early.depths.begin(), early.depths.end()), 8);
}

TEST(DepthController, EarlySamplesAreAveragedNotDominatedByTheFirst) {
  // One unlucky first round must not outweigh the rounds after it, as an EWMA seeded with
  // its first sample would (0 then 1 at weight 0.1 reads 0.1).
  DepthController c(DepthController::Options{.ewma = 0.1, .trusted_after = 1});
  c.observe_round(1, 0, 0.0, 0.03);
  c.observe_round(1, 1, 0.0, 0.01);
  EXPECT_DOUBLE_EQ(c.acceptance(1), 0.5);
  for (int i = 0; i < 8; ++i) c.observe_round(1, 1, 0.0, 0.01);
  EXPECT_DOUBLE_EQ(c.acceptance(1), 0.9);  // the mean of 10
  // Past 1 / ewma samples, a new one weighs ewma.
  c.observe_round(1, 0, 0.0, 0.01);
  EXPECT_DOUBLE_EQ(c.acceptance(1), 0.9 - 0.1 * 0.9);
}
