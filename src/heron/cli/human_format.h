#pragma once
// Ollama's way of showing numbers to people: sizes in decimal units ("4.7 GB"),
// times relative to now ("2 minutes ago", "4 minutes from now"), Go-style durations
// ("1.234s") and space-aligned tables.
#include <chrono>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace heron::cli {

using SystemTime = std::chrono::system_clock::time_point;

std::string human_bytes(int64_t bytes);
// `t` relative to `now`; "Forever" for dates decades ahead (Ollama's keep-forever marker).
std::string human_time(SystemTime t, SystemTime now = std::chrono::system_clock::now());
// Go's time.Duration.String(): "1.5s", "12.345ms", "2m3.5s".
std::string go_duration(int64_t nanoseconds);
// RFC 3339 with optional fraction and offset; nullopt when `text` is not one.
std::optional<SystemTime> parse_rfc3339(const std::string& text);

// Columns left-aligned, each as wide as its widest cell, separated by four spaces
// (Ollama's tables).
void print_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows);

}  // namespace heron::cli
