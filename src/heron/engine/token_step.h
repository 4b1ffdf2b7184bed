#pragma once
// One generated token as the decode loop reads it back from the device.
#include <optional>
#include <utility>
#include <vector>

namespace heron::engine {

struct TokenStep {
  int id = 0;
  std::optional<float> logprob;            // raw log-softmax, when logprobs were asked for
  std::vector<std::pair<int, float>> top;  // (id, logprob), most likely first
  bool completes = false;                  // the output's grammar holds a whole value now
};

}  // namespace heron::engine
