// sample::verify is exact: whatever the drafts and the distribution q they were drawn
// from, the tokens a round commits are distributed as the target's filtered distribution
// p, row by row (Leviathan et al. 2023, theorem 1). Pearson chi-square tests over many
// rounds, each at a false-failure rate of 1e-6; point-mass drafts reproduce the plain
// sampler's own draws token for token.
#include <gtest/gtest.h>
#include <mlx/mlx.h>

#include <cmath>
#include <random>
#include <string>

#include "heron/sample/filter.h"
#include "heron/sample/verify.h"

namespace mx = mlx::core;
using heron::sample::filter_rows;
using heron::sample::Filtered;
using heron::sample::SamplingOptions;
using heron::sample::verify;

namespace {

constexpr int kVocab = 6;
constexpr int kDrafts = 2;
constexpr int kRounds = 5000;
// Chi-square critical values at a 1e-6 false-failure rate, by degrees of freedom.
constexpr double kChiSquare1e6[] = {0, 23.93, 27.63, 30.66, 33.38, 35.89};

// Target logits for three rows (the current token and two drafts).
const std::vector<float> kLogits = {
    1.2f,  0.9f, 0.1f, -0.4f, 0.5f, -2.0f,  //
    0.2f,  1.5f, 1.1f, -0.3f, 0.0f, 0.4f,   //
    -0.5f, 0.3f, 0.8f, 1.4f,  0.6f, -1.0f,
};
// Draft distributions unlike the target: each gives nothing to a token the target likes
// (only the residual can commit it) and mass to tokens the filters remove.
const std::vector<std::vector<double>> kDraftProbs = {
    {0.0, 0.3, 0.1, 0.2, 0.1, 0.3},
    {0.25, 0.0, 0.25, 0.1, 0.2, 0.2},
};

std::vector<float> host(const mx::array& a) {
  auto f = mx::astype(a, mx::float32);
  mx::eval(f);
  return {f.data<float>(), f.data<float>() + f.size()};
}

Filtered target_for(const SamplingOptions& options) {
  auto logits = mx::array(kLogits.data(), {kDrafts + 1, kVocab}, mx::float32);
  std::optional<mx::array> windows;
  if (options.penalties_active()) {
    // Every row has seen tokens 0 and 4.
    const std::vector<int32_t> seen = {0, 4, 0, 4, 0, 4};
    windows = mx::array(seen.data(), {kDrafts + 1, 2}, mx::int32);
  }
  return filter_rows(logits, options, windows);
}

// Pearson's chi-square of `counts` against p; a token p gives nothing must never appear.
void expect_distributed_as(const std::vector<double>& counts, const float* p,
                           const std::string& what) {
  double n = 0;
  for (double c : counts) n += c;
  double chi = 0;
  int cells = 0;
  for (int t = 0; t < kVocab; ++t) {
    if (p[t] <= 0) {
      EXPECT_EQ(counts[t], 0) << what << ": token " << t << " is outside the target's support";
      continue;
    }
    const double expected = n * p[t];
    ASSERT_GE(expected, 5) << what << ": too few samples for a chi-square test";
    chi += (counts[t] - expected) * (counts[t] - expected) / expected;
    ++cells;
  }
  ASSERT_GE(cells, 2) << what;
  EXPECT_LT(chi, kChiSquare1e6[cells - 1])
      << what << ": chi-square " << chi << " over " << cells << " tokens from " << n << " samples";
}

struct Tally {
  std::vector<std::vector<double>> committed{kDrafts + 1, std::vector<double>(kVocab)};
  double first_accepted = 0;
};

// kRounds rounds: drafts drawn from q on the host, verified on the device.
Tally run_rounds(const Filtered& target) {
  std::mt19937 rng(1234);
  std::vector<std::discrete_distribution<int>> q_draw;
  std::vector<float> q_flat;
  for (const auto& row : kDraftProbs) {
    q_draw.emplace_back(row.begin(), row.end());
    q_flat.insert(q_flat.end(), row.begin(), row.end());
  }
  auto q = mx::array(q_flat.data(), {kDrafts, kVocab}, mx::float32);
  Tally tally;
  for (int r = 0; r < kRounds; ++r) {
    std::vector<int> drafts;
    for (auto& d : q_draw) drafts.push_back(d(rng));
    auto verdict = verify(target, drafts, q, /*seed=*/static_cast<uint64_t>(r), 100);
    mx::eval(verdict.accepted, verdict.tokens);
    const int accepted = verdict.accepted.item<int32_t>();
    const int32_t* tokens = verdict.tokens.data<int32_t>();
    // Row i's token is committed when every draft before it was accepted.
    for (int i = 0; i <= accepted; ++i) tally.committed[i][tokens[i]] += 1;
    tally.first_accepted += accepted >= 1 ? 1 : 0;
  }
  return tally;
}

void expect_exact(const SamplingOptions& options) {
  const auto target = target_for(options);
  const auto p = host(target.probs());
  const auto tally = run_rounds(target);
  for (int row = 0; row <= kDrafts; ++row) {
    expect_distributed_as(tally.committed[row], p.data() + row * kVocab,
                          "row " + std::to_string(row));
  }
  // The first draft is accepted with probability sum_x min(p(x), q(x)): binomial, within
  // 5 standard deviations (a 6e-7 false-failure rate).
  double overlap = 0;
  for (int t = 0; t < kVocab; ++t) overlap += std::min<double>(p[t], kDraftProbs[0][t]);
  const double sd = std::sqrt(kRounds * overlap * (1 - overlap));
  EXPECT_NEAR(tally.first_accepted, kRounds * overlap, 5 * sd);
}

}  // namespace

TEST(SpeculativeVerify, RejectionSamplingIsExactAtTemperatureOne) {
  expect_exact({.temperature = 1.0f});
}

TEST(SpeculativeVerify, RejectionSamplingIsExactWithTopKAtLowTemperature) {
  expect_exact({.temperature = 0.6f, .top_k = 4});
}

TEST(SpeculativeVerify, RejectionSamplingIsExactWithTopPMinPAndPenalties) {
  expect_exact({.temperature = 0.9f,
                .top_p = 0.9f,
                .min_p = 0.08f,
                .repeat_penalty = 1.3f,
                .presence_penalty = 0.2f});
}

TEST(SpeculativeVerify, PointMassDraftsCommitThePlainSamplersOwnDraws) {
  const auto target = target_for({.temperature = 1.0f});
  int partial = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    auto own = target.draw(seed, 40);
    mx::eval(own);
    const int32_t* o = own.data<int32_t>();
    // Drafts that agree with the plain draws up to a seed-dependent point.
    std::vector<int> drafts = {o[0], o[1]};
    const int wrong_from = static_cast<int>(seed % 3);  // 2: none wrong
    for (int i = wrong_from; i < kDrafts; ++i) drafts[i] = (drafts[i] + 1) % kVocab;
    auto verdict = verify(target, drafts, std::nullopt, seed, 40);
    mx::eval(verdict.accepted, verdict.tokens);
    const int accepted = verdict.accepted.item<int32_t>();
    ASSERT_EQ(accepted, wrong_from) << "seed " << seed;
    for (int i = 0; i <= accepted; ++i) {
      EXPECT_EQ(verdict.tokens.data<int32_t>()[i], o[i]) << "seed " << seed << " row " << i;
    }
    partial += accepted < kDrafts;
  }
  EXPECT_GT(partial, 0);
}

TEST(SpeculativeVerify, GreedyTargetsCommitTheArgmaxWhateverQSays) {
  const auto target = target_for({.temperature = 0.0f});
  auto q = mx::array(std::vector<float>{0.5f, 0, 0.5f, 0, 0, 0, 0, 0.5f, 0.5f, 0, 0, 0}.data(),
                     {kDrafts, kVocab}, mx::float32);
  // Row argmaxes: 0, 1, 3; every draft below has mass under q.
  for (const auto& [drafts, accepted, tokens] :
       std::vector<std::tuple<std::vector<int>, int, std::vector<int>>>{
           {{0, 1}, 2, {0, 1, 3}}, {{0, 2}, 1, {0, 1}}, {{2, 1}, 0, {0}}}) {
    for (uint64_t seed = 0; seed < 20; ++seed) {
      auto verdict = verify(target, drafts, q, seed, 0);
      mx::eval(verdict.accepted, verdict.tokens);
      ASSERT_EQ(verdict.accepted.item<int32_t>(), accepted);
      for (int i = 0; i <= accepted; ++i) {
        EXPECT_EQ(verdict.tokens.data<int32_t>()[i], tokens[i]);
      }
    }
  }
}
