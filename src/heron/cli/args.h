#pragma once
// Command-line flags: declared up front, parsed strictly, converted with range
// checks. Every mistake is a UsageError that names the flag.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "heron/core/error.h"

namespace heron::cli {

class UsageError : public Error {
 public:
  using Error::Error;
};

struct FlagSpec {
  std::string name;  // without the leading "--"
  bool takes_value;
  std::string help;
};

class Args {
 public:
  Args(const std::string& command, const std::vector<FlagSpec>& specs,
       const std::vector<std::string>& argv);

  bool has(const std::string& name) const { return values_.count(name) != 0; }
  std::optional<std::string> get(const std::string& name) const;
  std::string get_or(const std::string& name, const std::string& fallback) const;
  int64_t get_int(const std::string& name, int64_t fallback, int64_t min, int64_t max) const;
  double get_double(const std::string& name, double fallback, double min, double max) const;
  const std::vector<std::string>& positional() const { return positional_; }

  static std::string usage(const std::string& command, const std::vector<FlagSpec>& specs);

 private:
  std::string command_;
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
};

}  // namespace heron::cli
