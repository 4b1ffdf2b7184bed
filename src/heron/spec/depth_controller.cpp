#include "heron/spec/depth_controller.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "heron/core/error.h"

namespace heron::spec {

namespace {

// Before anything is measured, costs are in units of one plain step: a verify of width w
// is assumed a little dearer than a plain step and almost flat in w (optimistic, so
// speculation is tried; the first rounds measure the truth).
constexpr double kUnmeasuredVerify = 1.1;
constexpr double kUnmeasuredSlope = 0.02;
// Past this, deeper drafts cannot add a measurable share of a token.
constexpr double kNegligible = 1e-4;
constexpr int kCostsVersion = 1;
constexpr int kFirstDepth = 4;
// Timed plain steps before the first round (pipelined steps are timed from the second on).
constexpr int kPlainSamplesFirst = 2;
// Every kPlainProbeEvery decisions, kPlainProbeSteps plain steps (two timed).
constexpr int64_t kPlainProbeEvery = 64;
constexpr int64_t kPlainProbeSteps = 3;
constexpr double kUnexploredDiscount = 0.9;

}  // namespace

void DepthController::Ewma::add(double sample, double weight) {
  // A running mean until the EWMA's weight takes over, so a first sample (a cold verify,
  // one unlucky round) weighs no more than any other.
  const double w = std::max(weight, 1.0 / static_cast<double>(samples + 1));
  value += w * (sample - value);
  ++samples;
}

DepthController::DepthController() : DepthController(Options{}) {}

DepthController::DepthController(Options options) : options_(options) {}

double DepthController::acceptance(int position) const {
  // A position's own rate once it has enough samples; until then blended towards the one
  // before it, discounted: depth must prove itself, or the rare long runs a deep position
  // is sampled in would draw the choice ever deeper.
  double prior = options_.prior_accept;
  for (int k = 1; k <= position; ++k) {
    const auto i = static_cast<size_t>(k - 1);
    if (i >= accept_.size() || accept_[i].samples == 0) {
      prior *= kUnexploredDiscount;
      continue;
    }
    const double trust = std::min<double>(
        1.0, static_cast<double>(accept_[i].samples) / std::max(1, options_.trusted_after));
    prior = trust * accept_[i].value + (1 - trust) * prior * kUnexploredDiscount;
  }
  return prior;
}

double DepthController::plain_cost() const {
  if (plain_.samples > 0) return plain_.value;
  if (auto it = verify_.find(1); it != verify_.end()) return it->second.value / kUnmeasuredVerify;
  return 1.0;
}

double DepthController::verify_cost(int width) const {
  if (verify_.empty()) return plain_cost() * (kUnmeasuredVerify + kUnmeasuredSlope * (width - 1));
  auto above = verify_.lower_bound(width);
  if (above != verify_.end() && above->first == width) return above->second.value;
  if (above == verify_.begin()) {
    // Below every measured width: no dearer than the narrowest measured one.
    return above->second.value;
  }
  auto below = std::prev(above);
  if (above != verify_.end()) {
    const double t = static_cast<double>(width - below->first) / (above->first - below->first);
    return below->second.value + t * (above->second.value - below->second.value);
  }
  // Past the widest measured width: the slope of the last two, or the assumed one.
  double slope = kUnmeasuredSlope * below->second.value;
  if (below != verify_.begin()) {
    auto before = std::prev(below);
    slope = std::max(0.0,
                     (below->second.value - before->second.value) / (below->first - before->first));
  }
  return below->second.value + slope * (width - below->first);
}

double DepthController::rate(int n) const {
  if (n <= 0) return 1.0 / plain_cost();
  double expected = 1, product = 1;
  for (int k = 1; k <= n; ++k) {
    product *= acceptance(k);
    expected += product;
  }
  const double draft = draft_step_.samples > 0 ? draft_step_.value : 0.0;
  return expected / (n * draft + verify_cost(n + 1));
}

int DepthController::choose(int max_depth) {
  ++decisions_;
  if (max_depth <= 0) return 0;
  if (options_.fixed_depth) return std::min(*options_.fixed_depth, max_depth);
  // What speculation must beat is timed first, and again now and then (it drifts with the
  // context and the machine's load): a drafter that always proposes would otherwise never
  // let a plain step be timed.
  if (plain_.samples < kPlainSamplesFirst || decisions_ % kPlainProbeEvery < kPlainProbeSteps) {
    return 0;
  }
  // Costs are extrapolated past the widest measured verify only so far: twice that
  // depth (kFirstDepth before anything is measured), so depth grows as it is measured.
  const int limit = verify_.empty() ? kFirstDepth : 2 * verify_.rbegin()->first;
  int best = 0;
  double best_rate = rate(0);
  double product = 1;
  for (int n = 1; n <= std::min(max_depth, limit); ++n) {
    if (const double r = rate(n); r > best_rate) {
      best = n;
      best_rate = r;
    }
    product *= acceptance(n);
    if (product < kNegligible) break;
  }
  if (options_.probe_every > 0 && decisions_ % options_.probe_every == 0 && best < max_depth) {
    ++best;
  }
  return best;
}

void DepthController::observe_round(int drafted, int accepted, double draft_seconds,
                                    double verify_seconds) {
  if (drafted <= 0) return;
  if (accept_.size() < static_cast<size_t>(drafted)) accept_.resize(static_cast<size_t>(drafted));
  for (int k = 1; k <= std::min(drafted, accepted + 1); ++k) {
    accept_[static_cast<size_t>(k - 1)].add(k <= accepted ? 1.0 : 0.0, options_.ewma);
  }
  draft_step_.add(draft_seconds / drafted, options_.ewma);
  verify_[drafted + 1].add(verify_seconds, options_.ewma);
}

void DepthController::observe_plain(double seconds) {
  plain_.add(seconds, options_.ewma);
}

nlohmann::json DepthController::costs() const {
  nlohmann::json verify = nlohmann::json::object();
  for (const auto& [width, cost] : verify_) verify[std::to_string(width)] = cost.value;
  nlohmann::json out = {{"version", kCostsVersion}, {"verify", verify}};
  if (plain_.samples > 0) out["plain"] = plain_.value;
  if (draft_step_.samples > 0) out["draft_step"] = draft_step_.value;
  return out;
}

void DepthController::load_costs(const nlohmann::json& json) {
  auto seconds = [](const nlohmann::json& v, const std::string& what) {
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0) {
      throw Error("speculation costs: " + what + " is not a number of seconds");
    }
    return v.get<double>();
  };
  if (!json.is_object() || json.value("version", 0) != kCostsVersion || !json.contains("verify") ||
      !json["verify"].is_object()) {
    throw Error("speculation costs: not a version " + std::to_string(kCostsVersion) + " table");
  }
  std::map<int, Ewma> verify;
  for (const auto& [key, value] : json["verify"].items()) {
    size_t used = 0;
    int width = 0;
    try {
      width = std::stoi(key, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != key.size() || width < 1) throw Error("speculation costs: bad width '" + key + "'");
    verify[width] = {seconds(value, "width " + key), 1};
  }
  Ewma plain, draft;
  if (json.contains("plain")) plain = {seconds(json["plain"], "plain"), 1};
  if (json.contains("draft_step")) draft = {seconds(json["draft_step"], "draft_step"), 1};
  verify_ = std::move(verify);
  plain_ = plain;
  draft_step_ = draft;
}

}  // namespace heron::spec
