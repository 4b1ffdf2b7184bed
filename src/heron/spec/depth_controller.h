#pragma once
// Chooses each round's draft depth N to maximize committed tokens per second:
//   E(N) = 1 + sum_{k <= N} a_1 * ... * a_k   over   cost(N) = N * draft_step + verify(N + 1)
// with a_k the live (EWMA) rate at which the target accepts the k-th draft once the
// ones before it were accepted (until a position has enough samples, the one before it,
// discounted), and cost(0) the plain decoder's step. Verify costs are
// measured per width and interpolated between measured widths (and chosen up to twice
// the widest measured, so depth grows as fast as it is measured); depths are probed now
// and then one deeper than the choice, so the tables keep learning; there is no fixed
// cap but the caller's. Depth 0 whenever no depth pays, so speculation never loses to
// plain decoding, and until a plain step has been timed. The cost tables round-trip through JSON,
// so a new runner starts calibrated.
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

namespace heron::spec {

class DepthController {
 public:
  struct Options {
    double ewma = 0.1;               // weight of a new sample
    int trusted_after = 8;           // samples before a position's own rate is used
    int probe_every = 16;            // decisions between probes one deeper than the choice
    double prior_accept = 0.6;       // the rate assumed before any position is trusted
    std::optional<int> fixed_depth;  // always this depth (benchmarks); nothing is chosen
  };

  DepthController();
  explicit DepthController(Options options);

  // The depth of the next round, 0..max_depth.
  int choose(int max_depth);
  // A round drafted `drafted` tokens of which the target accepted the first `accepted`;
  // drafting took draft_seconds, verifying drafted + 1 positions verify_seconds.
  void observe_round(int drafted, int accepted, double draft_seconds, double verify_seconds);
  // One plain (pipelined) decode step's wall time.
  void observe_plain(double seconds);

  // The expected committed tokens per second at depth n, from what is known now.
  double rate(int n) const;
  double acceptance(int position) const;  // a_position, 1-based

  nlohmann::json costs() const;
  // Replaces the cost tables; throws heron::Error when `json` is not costs() output.
  void load_costs(const nlohmann::json& json);

 private:
  struct Ewma {
    double value = 0;
    int64_t samples = 0;
    void add(double sample, double weight);
  };
  double verify_cost(int width) const;
  double plain_cost() const;

  Options options_;
  std::vector<Ewma> accept_;    // [k - 1]: a_k
  std::map<int, Ewma> verify_;  // verify width -> seconds
  Ewma plain_, draft_step_;
  int64_t decisions_ = 0;
};

}  // namespace heron::spec
