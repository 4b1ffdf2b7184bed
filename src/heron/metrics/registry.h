#pragma once
// A small Prometheus-style metrics registry: families of counters, gauges and histograms,
// each series named by its label values. Every family locks itself, so HTTP threads record
// while a scrape renders. Names are checked when a family is made (a bad one is a
// programming error, std::invalid_argument); label values are free text, escaped when
// rendered (text_format.h).
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace heron::metrics {

// One value per label name of the family, in the same order.
using LabelValues = std::vector<std::string>;

class Family {
 public:
  Family(std::string name, std::string help, std::string type, std::vector<std::string> labels);
  virtual ~Family() = default;
  Family(const Family&) = delete;
  Family& operator=(const Family&) = delete;

  const std::string& name() const { return name_; }
  // The family's "# HELP" and "# TYPE" lines and its samples, in label order.
  void render(std::string& out) const;

 protected:
  // Throws std::invalid_argument unless there is one value per label name.
  void check_arity(const LabelValues& values) const;
  virtual void render_samples(std::string& out) const = 0;

  const std::string name_;
  const std::string help_;
  const std::string type_;
  const std::vector<std::string> labels_;
  mutable std::mutex mu_;
};

// One number per series: what counters and gauges share.
class ValueFamily : public Family {
 public:
  using Family::Family;
  double value(const LabelValues& values) const;  // 0 for a series never recorded

 protected:
  void render_samples(std::string& out) const override;
  std::map<LabelValues, double> series_;
};

// Only goes up (Prometheus sees a restart as a reset); name it ..._total.
class CounterFamily : public ValueFamily {
 public:
  CounterFamily(std::string name, std::string help, std::vector<std::string> labels);
  // Throws std::invalid_argument for a negative amount.
  void add(const LabelValues& values, double amount = 1);
};

// A value as it is now. `replace` swaps in a whole snapshot, for values read from elsewhere
// at scrape time (loaded models), so a series whose subject went away disappears with it.
class GaugeFamily : public ValueFamily {
 public:
  GaugeFamily(std::string name, std::string help, std::vector<std::string> labels);
  void set(const LabelValues& values, double value);
  void add(const LabelValues& values, double delta);
  void replace(std::map<LabelValues, double> snapshot);
};

// Observations counted into buckets of upper bounds (`le`), plus their count and sum.
class HistogramFamily : public Family {
 public:
  // `bounds`: strictly increasing and finite; +Inf is added.
  HistogramFamily(std::string name, std::string help, std::vector<std::string> labels,
                  std::vector<double> bounds);
  void observe(const LabelValues& values, double value);

 private:
  struct Series {
    std::vector<uint64_t> buckets;  // per bound, not cumulative; the last is +Inf
    uint64_t count = 0;
    double sum = 0;
  };
  void render_samples(std::string& out) const override;
  const std::vector<double> bounds_;
  std::map<LabelValues, Series> series_;
};

class Registry {
 public:
  // Each name may be registered once (std::invalid_argument otherwise). The family lives
  // as long as the registry.
  CounterFamily& counter(const std::string& name, const std::string& help,
                         std::vector<std::string> labels = {});
  GaugeFamily& gauge(const std::string& name, const std::string& help,
                     std::vector<std::string> labels = {});
  HistogramFamily& histogram(const std::string& name, const std::string& help,
                             std::vector<std::string> labels, std::vector<double> bounds);
  // Every family in registration order, in the text exposition format 0.0.4.
  std::string render() const;

 private:
  template <typename F, typename... Args>
  F& add(Args&&... args);

  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Family>> families_;
};

}  // namespace heron::metrics
