// sample::verify is exact: whatever the drafts and the distribution q they were drawn
// from, the tokens a round commits are distributed as the target's filtered distribution
// p, row by row (Leviathan et al. 2023, theorem 1). 100,000 rounds of two drafts per
// configuration, verified in one batch; the first three committed tokens are tested
// with Pearson's chi-square, each at a false-failure rate of 1e-6. Point-mass drafts
// reproduce the plain sampler's own draws token for token.
#include <gtest/gtest.h>
#include <mlx/mlx.h>

#include <cmath>
#include <random>
#include <string>

#include "heron/sample/filter.h"
#include "heron/sample/keyed_random.h"
#include "heron/sample/verify.h"

namespace mx = mlx::core;
using heron::sample::filter_rows;
using heron::sample::Filtered;
using heron::sample::position_keys;
using heron::sample::SamplingOptions;
using heron::sample::verify;

namespace {

constexpr int kVocab = 6;
constexpr int kDrafts = 2;
constexpr int kRounds = 100000;
// Chi-square critical values at a 1e-6 false-failure rate, by degrees of freedom.
constexpr double kChiSquare1e6[] = {0, 23.93, 27.63, 30.66, 33.38, 35.89, 38.26};

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

// The target rows of `rounds` rounds, each the three rows of kLogits.
Filtered target_for(const SamplingOptions& options, int rounds = 1) {
  auto one = mx::array(kLogits.data(), {kDrafts + 1, kVocab}, mx::float32);
  auto logits = mx::tile(one, {rounds, 1});
  std::optional<mx::array> windows;
  if (options.penalties_active()) {
    // Every row has seen tokens 0 and 4.
    windows = mx::tile(mx::array({0, 4}, {1, 2}, mx::int32), {rounds * (kDrafts + 1), 1});
  }
  return filter_rows(logits, options, windows);
}

// Pearson's chi-square of `counts` against p, tokens whose expected count is below 5
// pooled into one cell; a token p gives nothing must never appear.
void expect_distributed_as(const std::vector<double>& counts, const float* p,
                           const std::string& what) {
  double n = 0;
  for (double c : counts) n += c;
  double chi = 0, pooled_count = 0, pooled_expected = 0;
  int cells = 0;
  for (int t = 0; t < kVocab; ++t) {
    if (p[t] <= 0) {
      EXPECT_EQ(counts[t], 0) << what << ": token " << t << " is outside the target's support";
      continue;
    }
    const double expected = n * p[t];
    if (expected < 5) {
      pooled_count += counts[t];
      pooled_expected += expected;
      continue;
    }
    chi += (counts[t] - expected) * (counts[t] - expected) / expected;
    ++cells;
  }
  if (pooled_expected > 0) {
    chi += (pooled_count - pooled_expected) * (pooled_count - pooled_expected) / pooled_expected;
    ++cells;
  }
  ASSERT_GE(cells, 2) << what << ": too few samples for a chi-square test";
  EXPECT_LT(chi, kChiSquare1e6[cells - 1])
      << what << ": chi-square " << chi << " over " << cells << " cells from " << n << " samples";
}

struct Tally {
  std::vector<std::vector<double>> committed{kDrafts + 1, std::vector<double>(kVocab)};
  double first_accepted = 0;
};

// kRounds rounds, drafts drawn from q on the host, verified on the device in one batch;
// round b's rows are positions 3b .. 3b + 2 of one seed.
Tally run_rounds(const SamplingOptions& options) {
  std::mt19937 rng(1234);
  std::vector<std::discrete_distribution<int>> q_draw;
  std::vector<float> q_flat;
  for (const auto& row : kDraftProbs) {
    q_draw.emplace_back(row.begin(), row.end());
    q_flat.insert(q_flat.end(), row.begin(), row.end());
  }
  std::vector<int32_t> drafts;
  for (int r = 0; r < kRounds; ++r) {
    for (auto& d : q_draw) drafts.push_back(d(rng));
  }
  auto q = mx::broadcast_to(mx::array(q_flat.data(), {1, kDrafts, kVocab}, mx::float32),
                            {kRounds, kDrafts, kVocab});
  auto verdict =
      verify(target_for(options, kRounds), mx::array(drafts.data(), {kRounds, kDrafts}, mx::int32),
             q, position_keys(/*seed=*/5, 0, kRounds * (kDrafts + 1)));
  mx::eval(verdict.accepted, verdict.tokens);
  const int32_t* accepted = verdict.accepted.data<int32_t>();
  const int32_t* tokens = verdict.tokens.data<int32_t>();
  Tally tally;
  for (int r = 0; r < kRounds; ++r) {
    // Row i's token is committed when every draft before it was accepted.
    for (int i = 0; i <= accepted[r]; ++i) tally.committed[i][tokens[r * (kDrafts + 1) + i]] += 1;
    tally.first_accepted += accepted[r] >= 1 ? 1 : 0;
  }
  return tally;
}

void expect_exact(const SamplingOptions& options) {
  const auto p = host(target_for(options).probs());
  const auto tally = run_rounds(options);
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

TEST(SpeculativeVerify, RejectionSamplingIsExactAtTemperature03WithTopK) {
  expect_exact({.temperature = 0.3f, .top_k = 4});
}

TEST(SpeculativeVerify, RejectionSamplingIsExactWithTopPMinPAndPenalties) {
  expect_exact({.temperature = 1.0f,
                .top_p = 0.9f,
                .min_p = 0.08f,
                .repeat_penalty = 1.3f,
                .presence_penalty = 0.2f});
}

TEST(SpeculativeVerify, RejectionSamplingIsExactAtTemperature03WithEveryFilter) {
  expect_exact(
      {.temperature = 0.3f, .top_k = 5, .top_p = 0.95f, .min_p = 0.02f, .repeat_penalty = 1.2f});
}

TEST(SpeculativeVerify, PointMassDraftsCommitThePlainSamplersOwnDraws) {
  const auto target = target_for({.temperature = 1.0f});
  int partial = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    const auto keys = position_keys(seed, 40, kDrafts + 1);
    auto own = target.draw(keys);
    mx::eval(own);
    const int32_t* o = own.data<int32_t>();
    // Drafts that agree with the plain draws up to a seed-dependent point.
    std::vector<int32_t> drafts = {o[0], o[1]};
    const int wrong_from = static_cast<int>(seed % 3);  // 2: none wrong
    for (int i = wrong_from; i < kDrafts; ++i) drafts[i] = (drafts[i] + 1) % kVocab;
    auto verdict =
        verify(target, mx::array(drafts.data(), {1, kDrafts}, mx::int32), std::nullopt, keys);
    mx::eval(verdict.accepted, verdict.tokens);
    const int accepted = verdict.accepted.data<int32_t>()[0];
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
       std::vector<std::tuple<std::vector<int32_t>, int, std::vector<int>>>{
           {{0, 1}, 2, {0, 1, 3}}, {{0, 2}, 1, {0, 1}}, {{2, 1}, 0, {0}}}) {
    for (uint64_t seed = 0; seed < 20; ++seed) {
      auto verdict = verify(target, mx::array(drafts.data(), {1, kDrafts}, mx::int32),
                            mx::expand_dims(q, 0), position_keys(seed, 0, kDrafts + 1));
      mx::eval(verdict.accepted, verdict.tokens);
      ASSERT_EQ(verdict.accepted.data<int32_t>()[0], accepted);
      for (int i = 0; i <= accepted; ++i) {
        EXPECT_EQ(verdict.tokens.data<int32_t>()[i], tokens[i]);
      }
    }
  }
}
