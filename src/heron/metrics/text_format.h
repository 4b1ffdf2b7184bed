#pragma once
// Prometheus' text exposition format 0.0.4: names, escaping and numbers as its parsers
// read them.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace heron::metrics {

// What a scrape's Content-Type says.
inline constexpr const char* kTextContentType = "text/plain; version=0.0.4; charset=utf-8";

// [a-zA-Z_:][a-zA-Z0-9_:]*
bool valid_metric_name(std::string_view name);
// [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__" (reserved for Prometheus itself).
bool valid_label_name(std::string_view name);

// A label value inside its quotes: backslash, double quote and line feed escaped.
std::string escape_label_value(std::string_view value);
// HELP text: backslash and line feed escaped (quotes stay as they are).
std::string escape_help(std::string_view help);
// Integers as integers, others in the shortest form that reads back the same; +Inf, -Inf,
// NaN as Prometheus spells them.
std::string format_value(double value);

// `name{a="x",b="y"} value\n`; `extra` is one more label (a histogram's le) when not empty.
void write_sample(std::string& out, std::string_view name, const std::vector<std::string>& labels,
                  const std::vector<std::string>& values, double value,
                  const std::pair<std::string, std::string>& extra = {});

}  // namespace heron::metrics
