#include "heron/cli/args.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

namespace heron::cli {

Args::Args(const std::string& command, const std::vector<FlagSpec>& specs,
           const std::vector<std::string>& argv)
    : command_(command) {
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.size() < 3 || a.rfind("--", 0) != 0) {
      positional_.push_back(a);
      continue;
    }
    std::string name = a.substr(2);
    std::optional<std::string> inline_value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    auto spec =
        std::find_if(specs.begin(), specs.end(), [&](const FlagSpec& s) { return s.name == name; });
    if (spec == specs.end()) {
      throw UsageError("unknown flag --" + name + " for 'heron " + command + "' (see heron " +
                       command + " --help)");
    }
    if (values_.count(name)) throw UsageError("--" + name + " given more than once");
    if (!spec->takes_value) {
      if (inline_value) throw UsageError("--" + name + " takes no value");
      values_[name] = "";
    } else if (inline_value) {
      values_[name] = *inline_value;
    } else if (i + 1 < argv.size()) {
      values_[name] = argv[++i];
    } else {
      throw UsageError("--" + name + " needs a value");
    }
  }
}

std::optional<std::string> Args::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string Args::get_or(const std::string& name, const std::string& fallback) const {
  return get(name).value_or(fallback);
}

int64_t Args::get_int(const std::string& name, int64_t fallback, int64_t min, int64_t max) const {
  auto v = get(name);
  if (!v) return fallback;
  int64_t n = 0;
  auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
  if (ec != std::errc() || end != v->data() + v->size()) {
    throw UsageError("--" + name + " must be an integer, got '" + *v + "'");
  }
  if (n < min || n > max) {
    throw UsageError("--" + name + " must be between " + std::to_string(min) + " and " +
                     std::to_string(max) + ", got " + *v);
  }
  return n;
}

double Args::get_double(const std::string& name, double fallback, double min, double max) const {
  auto v = get(name);
  if (!v) return fallback;
  double x = 0;
  auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), x);
  if (ec != std::errc() || end != v->data() + v->size() || !std::isfinite(x)) {
    throw UsageError("--" + name + " must be a finite number, got '" + *v + "'");
  }
  if (x < min || x > max) {
    std::ostringstream msg;
    msg << "--" << name << " must be between " << min << " and " << max << ", got " << *v;
    throw UsageError(msg.str());
  }
  return x;
}

std::string Args::usage(const std::string& command, const std::vector<FlagSpec>& specs) {
  std::ostringstream out;
  out << "usage: heron " << command << " [flags]\n\nflags:\n";
  for (const auto& s : specs) {
    std::string left = "  --" + s.name + (s.takes_value ? " VALUE" : "");
    out << left << std::string(left.size() < 26 ? 26 - left.size() : 1, ' ') << s.help << "\n";
  }
  return out.str();
}

}  // namespace heron::cli
