#include "heron/runner/cache_setup.h"

#include <chrono>
#include <fstream>
#include <sstream>

#include <mlx/device.h>

#include "heron/core/sha256.h"
#include "heron/store/model_files.h"

namespace heron::runner {

namespace fs = std::filesystem;

namespace {

// /proc/meminfo's MemAvailable in bytes (0 when it cannot be read).
size_t available_memory() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream fields(line.substr(13));
      size_t kib = 0;
      fields >> kib;
      return kib * 1024;
    }
  }
  return 0;
}

}  // namespace

size_t cache_bytes_per_token(const model::ModelConfig& config) {
  const bool gpu = mlx::core::default_device() == mlx::core::Device::gpu;
  return static_cast<size_t>(config.attention_layers()) * config.cached_values_per_token() *
         (gpu ? 2 : 4);
}

size_t default_batch_memory() {
  return available_memory() / 2;
}

size_t default_cache_memory(const model::ModelConfig& config, int context) {
  const size_t live = cache_bytes_per_token(config) * static_cast<size_t>(context);
  const size_t available = available_memory();
  return available > live ? (available - live) / 2 : 0;
}

std::string model_cache_key(const fs::path& model_path) {
  store::ModelFiles files;
  if (store::is_manifest_path(model_path)) {
    files = store::files_of_manifest_path(model_path);
  } else if (fs::is_directory(model_path)) {
    files = store::files_of_dir(model_path);
  } else {
    files.files["model.gguf"] = model_path;
  }
  std::string identity = "heron prefix cache v1;";
  identity += mlx::core::default_device() == mlx::core::Device::gpu ? "gpu;" : "cpu;";
  for (const auto& [name, path] : files.files) {
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    const auto mtime = fs::last_write_time(path, ec).time_since_epoch();
    identity +=
        name + "=" + fs::weakly_canonical(path, ec).string() + ":" + std::to_string(size) + ":" +
        std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(mtime).count()) + ";";
  }
  return Sha256::of(identity);
}

nlohmann::json cache_json(const cache::PrefixCacheStats& s) {
  return {{"live_bytes", s.live_bytes},
          {"memory_bytes", s.memory_bytes},
          {"disk_bytes", s.disk_bytes},
          {"memory_budget", s.memory_budget},
          {"disk_budget", s.disk_budget},
          {"entries", s.entries},
          {"live_tokens", s.live_tokens},
          {"lookups", s.lookups},
          {"hits", s.hits},
          {"reused_tokens", s.reused_tokens}};
}

}  // namespace heron::runner
