#pragma once
// How a runner sets up its model's prefix cache: the memory budget it derives from the
// machine, the key that names the model's snapshots on disk, and how /status shows it.
#include <cstddef>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "heron/cache/prefix_cache.h"
#include "heron/model/config.h"

namespace heron::runner {

// Bytes a sequence's caches take per token (every attention layer's full cache, in the
// device's compute type).
size_t cache_bytes_per_token(const model::ModelConfig& config);

// HERON_CACHE_MEMORY's default: half of the memory still available once the weights are
// loaded, less what the live context can grow to (its KV cache at `context` tokens).
size_t default_cache_memory(const model::ModelConfig& config, int context);

// What batched rows' caches may take together (HERON_NUM_PARALLEL above 1, where the
// prefix cache stays empty): half of the memory still available once the weights are
// loaded.
size_t default_batch_memory();

// Names a model's disk snapshots: a SHA-256 over the model's files (name, size and
// modification time; store blobs are named by their content), the compute device and
// the snapshot format, so another model or a changed file never reads them.
std::string model_cache_key(const std::filesystem::path& model_path);

nlohmann::json cache_json(const cache::PrefixCacheStats& stats);

}  // namespace heron::runner
