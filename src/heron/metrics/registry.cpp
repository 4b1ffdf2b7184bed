#include "heron/metrics/registry.h"

#include <cmath>
#include <stdexcept>

#include "heron/metrics/text_format.h"

namespace heron::metrics {

Family::Family(std::string name, std::string help, std::string type,
               std::vector<std::string> labels)
    : name_(std::move(name)),
      help_(std::move(help)),
      type_(std::move(type)),
      labels_(std::move(labels)) {
  if (!valid_metric_name(name_)) throw std::invalid_argument("bad metric name '" + name_ + "'");
  for (const auto& label : labels_) {
    if (!valid_label_name(label)) {
      throw std::invalid_argument("bad label name '" + label + "' in " + name_);
    }
  }
}

void Family::render(std::string& out) const {
  out += "# HELP " + name_ + " " + escape_help(help_) + "\n";
  out += "# TYPE " + name_ + " " + type_ + "\n";
  std::lock_guard lock(mu_);
  render_samples(out);
}

void Family::check_arity(const LabelValues& values) const {
  if (values.size() != labels_.size()) {
    throw std::invalid_argument(name_ + " takes " + std::to_string(labels_.size()) +
                                " label values, not " + std::to_string(values.size()));
  }
}

double ValueFamily::value(const LabelValues& values) const {
  std::lock_guard lock(mu_);
  const auto it = series_.find(values);
  return it == series_.end() ? 0 : it->second;
}

void ValueFamily::render_samples(std::string& out) const {
  for (const auto& [values, v] : series_) write_sample(out, name_, labels_, values, v);
}

CounterFamily::CounterFamily(std::string name, std::string help, std::vector<std::string> labels)
    : ValueFamily(std::move(name), std::move(help), "counter", std::move(labels)) {}

void CounterFamily::add(const LabelValues& values, double amount) {
  check_arity(values);
  if (!(amount >= 0)) throw std::invalid_argument(name_ + " is a counter: it cannot go down");
  std::lock_guard lock(mu_);
  series_[values] += amount;
}

GaugeFamily::GaugeFamily(std::string name, std::string help, std::vector<std::string> labels)
    : ValueFamily(std::move(name), std::move(help), "gauge", std::move(labels)) {}

void GaugeFamily::set(const LabelValues& values, double value) {
  check_arity(values);
  std::lock_guard lock(mu_);
  series_[values] = value;
}

void GaugeFamily::add(const LabelValues& values, double delta) {
  check_arity(values);
  std::lock_guard lock(mu_);
  series_[values] += delta;
}

void GaugeFamily::replace(std::map<LabelValues, double> snapshot) {
  for (const auto& [values, v] : snapshot) check_arity(values);
  std::lock_guard lock(mu_);
  series_ = std::move(snapshot);
}

HistogramFamily::HistogramFamily(std::string name, std::string help,
                                 std::vector<std::string> labels, std::vector<double> bounds)
    : Family(std::move(name), std::move(help), "histogram", std::move(labels)),
      bounds_(std::move(bounds)) {
  for (size_t i = 0; i < bounds_.size(); ++i) {
    if (!std::isfinite(bounds_[i]) || (i > 0 && bounds_[i] <= bounds_[i - 1])) {
      throw std::invalid_argument(name_ + ": bucket bounds must be finite and increasing");
    }
  }
  for (const auto& label : labels_) {
    if (label == "le") throw std::invalid_argument(name_ + ": 'le' is the bucket label");
  }
}

void HistogramFamily::observe(const LabelValues& values, double value) {
  check_arity(values);
  std::lock_guard lock(mu_);
  auto& s = series_[values];
  if (s.buckets.empty()) s.buckets.assign(bounds_.size() + 1, 0);
  size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;  // le: upper bounds are inclusive
  ++s.buckets[i];
  ++s.count;
  s.sum += value;
}

void HistogramFamily::render_samples(std::string& out) const {
  for (const auto& [values, s] : series_) {
    uint64_t cumulative = 0;
    for (size_t i = 0; i <= bounds_.size(); ++i) {
      cumulative += s.buckets[i];
      const std::string le = i < bounds_.size() ? format_value(bounds_[i]) : "+Inf";
      write_sample(out, name_ + "_bucket", labels_, values, static_cast<double>(cumulative),
                   {"le", le});
    }
    write_sample(out, name_ + "_sum", labels_, values, s.sum);
    write_sample(out, name_ + "_count", labels_, values, static_cast<double>(s.count));
  }
}

template <typename F, typename... Args>
F& Registry::add(Args&&... args) {
  auto family = std::make_unique<F>(std::forward<Args>(args)...);
  F& ref = *family;
  std::lock_guard lock(mu_);
  for (const auto& f : families_) {
    if (f->name() == ref.name()) throw std::invalid_argument(ref.name() + " is registered twice");
  }
  families_.push_back(std::move(family));
  return ref;
}

CounterFamily& Registry::counter(const std::string& name, const std::string& help,
                                 std::vector<std::string> labels) {
  return add<CounterFamily>(name, help, std::move(labels));
}

GaugeFamily& Registry::gauge(const std::string& name, const std::string& help,
                             std::vector<std::string> labels) {
  return add<GaugeFamily>(name, help, std::move(labels));
}

HistogramFamily& Registry::histogram(const std::string& name, const std::string& help,
                                     std::vector<std::string> labels, std::vector<double> bounds) {
  return add<HistogramFamily>(name, help, std::move(labels), std::move(bounds));
}

std::string Registry::render() const {
  std::string out;
  std::lock_guard lock(mu_);
  for (const auto& f : families_) f->render(out);
  return out;
}

}  // namespace heron::metrics
