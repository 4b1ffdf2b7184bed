#pragma once
// Stop strings over streamed text: text that could still be the start of a stop
// string is held back until it cannot, and a stop string is never emitted, even when
// it spans several tokens. Input is complete UTF-8, and every split point is a code
// point boundary (a stop string's prefix starts where its first code point does).
#include <string>
#include <string_view>
#include <vector>

namespace heron::engine {

class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stops);
  // Adds text; returns what is safe to emit now. After a match, returns the text
  // before the stop string and matched() is true; later input is ignored.
  std::string push(std::string_view text);
  // At the end of generation: whatever is still held back.
  std::string flush();
  bool matched() const { return matched_; }

 private:
  std::vector<std::string> stops_;
  std::string held_;
  bool matched_ = false;
};

}  // namespace heron::engine
