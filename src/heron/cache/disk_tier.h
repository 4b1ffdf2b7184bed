#pragma once
// The prefix cache's disk tier (HERON_CACHE_DIR): snapshots written as one file each
// under a directory per model, so they survive runner restarts. A file holds one trie
// node: the whole token prefix up to its end (its key), where its edge begins, and every
// cache's segment tensors, with a SHA-256 of the payload. Files are written atomically
// (temporary file, fsync, rename); only headers are read when the tier is opened, and a
// payload is verified before use: a truncated or corrupted file is deleted, never
// trusted. Least recently used files (by modification time, touched on use) go first
// when the tier is over its byte budget.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <mlx/array.h>

namespace heron::cache {

class DiskTier {
 public:
  struct Entry {
    std::filesystem::path file;
    int begin = 0;
    std::vector<int> tokens;  // the prefix [0, end)
    size_t bytes = 0;         // the file's size
    int64_t used = 0;         // modification time, nanoseconds: recency across restarts
    int end() const { return static_cast<int>(tokens.size()); }
  };

  // `dir` is this model's directory (created when missing); `model_key` names the model
  // the snapshots belong to (files of another model are ignored).
  DiskTier(std::filesystem::path dir, std::string model_key, size_t budget);

  size_t budget() const { return budget_; }
  // Every readable entry's header, ordered by begin; unreadable files are deleted.
  std::vector<Entry> scan() const;
  // Writes one node: per cache, its segment tensors (evaluated here).
  Entry write(std::vector<int> tokens, int begin,
              const std::vector<std::vector<mlx::core::array>>& caches) const;
  // The tensors `write` stored, per cache; throws heron::Error (and deletes the file)
  // when it is missing, truncated or corrupted.
  std::vector<std::vector<mlx::core::array>> read(const Entry& entry) const;
  void remove(const Entry& entry) const;
  void touch(Entry& entry) const;

 private:
  std::filesystem::path dir_;
  std::string model_key_;
  size_t budget_;
};

}  // namespace heron::cache
