#pragma once
// Shows create progress: on a terminal one redrawn bar line (bytes, tensors, rate, time
// left); otherwise plain lines (each status once, tensor progress every 10%).
#include <chrono>
#include <cstdio>
#include <string>

#include "heron/store/create.h"

namespace heron::store {

class ProgressView {
 public:
  ProgressView(std::FILE* out, bool terminal) : out_(out), terminal_(terminal) {}
  void operator()(const Progress& p);
  // Ends a bar line left open.
  void finish();

 private:
  std::FILE* out_;
  bool terminal_;
  std::string status_;
  int last_decile_ = -1;
  bool bar_open_ = false;
  std::chrono::steady_clock::time_point started_, drawn_;
};

}  // namespace heron::store
