#pragma once
// Whitespace as the output syntaxes treat it around markers and tags: ASCII space, tab
// and line breaks (what templates write between tags).
#include <string_view>

namespace heron::chat_output {

inline constexpr std::string_view kSpace = " \t\r\n";

inline bool is_blank(std::string_view s) {
  return s.find_first_not_of(kSpace) == std::string_view::npos;
}

inline std::string_view trim_end(std::string_view s) {
  const size_t end = s.find_last_not_of(kSpace);
  return end == std::string_view::npos ? std::string_view() : s.substr(0, end + 1);
}

inline std::string_view trim(std::string_view s) {
  const size_t first = s.find_first_not_of(kSpace);
  return first == std::string_view::npos ? std::string_view() : trim_end(s.substr(first));
}

}  // namespace heron::chat_output
