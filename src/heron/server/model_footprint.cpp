#include "heron/server/model_footprint.h"

#include <cmath>
#include <cstdio>

#include "heron/core/error.h"

namespace heron::server {

namespace fs = std::filesystem;

uint64_t estimate_model_bytes(const fs::path& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return fs::file_size(path, ec);
  uint64_t total = 0;
  for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    const auto ext = it->path().extension();
    if ((ext == ".safetensors" || ext == ".gguf") && it->is_regular_file(ec)) {
      total += it->file_size(ec);
    }
  }
  return total;
}

uint64_t parse_byte_size(const std::string& text, const std::string& what) {
  const auto bad = [&] {
    return Error(what + " must be a size such as 16GiB, 512MiB or a number of bytes, not '" + text +
                 "'");
  };
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    throw bad();
  }
  std::string unit = text.substr(used);
  for (auto& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double scale = 0;
  if (unit.empty() || unit == "B") scale = 1;
  if (unit == "K" || unit == "KB" || unit == "KIB") scale = 0x1p10;
  if (unit == "M" || unit == "MB" || unit == "MIB") scale = 0x1p20;
  if (unit == "G" || unit == "GB" || unit == "GIB") scale = 0x1p30;
  if (unit == "T" || unit == "TB" || unit == "TIB") scale = 0x1p40;
  const double bytes = value * scale;
  if (scale == 0 || !std::isfinite(bytes) || bytes < 1 || bytes > 0x1p60) throw bad();
  return static_cast<uint64_t>(bytes);
}

std::string format_bytes(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / 0x1p30);
  return buf;
}

}  // namespace heron::server
