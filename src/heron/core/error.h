#pragma once
// One exception type for every failure a user can cause (bad file, bad flag, bad request).
// The message is complete on its own: it names the input and the problem.
#include <stdexcept>
#include <string>

namespace heron {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace heron
