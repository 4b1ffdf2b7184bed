#pragma once
// Agreement of a real model with another engine's recorded run on the same weights
// (fixtures made by tools/make_llamacpp_reference.py and friends): teacher-forced
// argmax at every position and greedy continuations, where a disagreement is allowed
// only at a near-tie (top-2 logit margin) of the reference.
#include <gtest/gtest.h>
#include <mlx/mlx.h>

#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "heron/cache/prefix_cache.h"
#include "heron/engine/generator.h"
#include "heron/model/loader.h"

namespace heron::test {

inline nlohmann::json read_fixture(const std::string& name) {
  std::ifstream in(std::string(HERON_FIXTURES) + "/" + name);
  return nlohmann::json::parse(in);
}

inline std::vector<int> teacher_forced_argmax(const model::LoadedModel& m,
                                              const std::vector<int>& tokens) {
  namespace mx = mlx::core;
  auto caches = m.model->make_caches();
  auto logits = m.model->forward(model::Batch::single(tokens, 0), caches).logits;
  auto argmax = mx::astype(mx::argmax(mx::squeeze(logits, 0), -1), mx::int32);
  mx::eval(argmax);
  return {argmax.data<int32_t>(), argmax.data<int32_t>() + argmax.size()};
}

inline std::vector<int> greedy(const model::LoadedModel& m, const std::vector<int>& prompt, int n) {
  engine::GenerateOptions options;
  options.max_tokens = n;
  options.ignore_eos = true;
  options.sampling.temperature = 0;
  std::vector<int> out;
  cache::PrefixCache cache(m.model->make_caches(), {});
  engine::generate(*m.model, cache, prompt, options, [&](const engine::TokenStep& t) {
    out.push_back(t.id);
    return engine::Next::Continue;
  });
  return out;
}

// Every disagreement must sit at a near-tie of the reference.
inline void expect_teacher_forced_agreement(const model::LoadedModel& m,
                                            const nlohmann::json& reference, double near_tie,
                                            size_t min_positions = 300) {
  const auto& tf = reference["teacher_forced"];
  auto expected = tf["argmax"].get<std::vector<int>>();
  auto margin = tf["margin"].get<std::vector<double>>();
  auto ours = teacher_forced_argmax(m, tf["tokens"].get<std::vector<int>>());
  ASSERT_EQ(ours.size(), expected.size());
  ASSERT_GE(ours.size(), min_positions);
  size_t agree = 0;
  for (size_t i = 0; i < ours.size(); ++i) {
    if (ours[i] == expected[i]) {
      ++agree;
    } else {
      EXPECT_LT(margin[i], near_tie)
          << "position " << i << ": ours " << ours[i] << ", reference " << expected[i];
    }
  }
  std::cout << "  teacher-forced argmax agreement: " << agree << "/" << ours.size() << "\n";
}

// Greedy runs may part only at a near-tie of the reference; returns the matched length.
inline size_t expect_greedy_agreement(const model::LoadedModel& m, const nlohmann::json& g,
                                      double near_tie) {
  auto expected = g["continuation"].get<std::vector<int>>();
  auto margins = g["margins"].get<std::vector<double>>();
  auto ours =
      greedy(m, g["prompt_tokens"].get<std::vector<int>>(), static_cast<int>(expected.size()));
  size_t same = 0;
  while (same < ours.size() && ours[same] == expected[same]) ++same;
  if (same < expected.size()) {
    EXPECT_LT(margins[same], near_tie)
        << g["prompt"] << ": parted at token " << same << " where the reference was sure";
  }
  return same;
}

}  // namespace heron::test
