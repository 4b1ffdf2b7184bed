#pragma once
// The model store: HERON_MODELS (default ~/.heron/models) holding blobs/sha256-<hex>
// and manifests/<space>/<name>/<tag>. Every write is a temp file in the store's own
// tmp/ dir, fsynced and renamed into place, so a killed writer leaves no partial blob
// or manifest. Creates hold a shared lock on .lock; whoever gets the lock exclusively
// (opening the store, deleting a model) may remove stale temp files and blobs no
// manifest uses. Symlinks inside the store are never followed.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "heron/core/sha256.h"
#include "heron/store/manifest.h"
#include "heron/store/name.h"

namespace heron::store {

class Store {
 public:
  // Creates the directories when missing, then cleans up when nobody else is writing.
  explicit Store(std::filesystem::path root);
  // $HERON_MODELS, else $HOME/.heron/models.
  static std::filesystem::path default_root();

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path tmp_dir() const { return root_ / "tmp"; }

  // Path of an existing blob; throws when the digest is malformed, the blob is missing
  // or is not a regular file (a symlink counts as missing).
  std::filesystem::path blob_path(const std::string& digest) const;
  bool has_blob(const std::string& digest) const;
  // A small blob's bytes, checked against its digest.
  std::string read_blob(const std::string& digest) const;
  // Stores bytes as a blob and returns its layer (digest and size).
  Layer write_blob(const std::string& bytes, const std::string& name = "") const;

  std::optional<Manifest> read_manifest(const ModelName& name) const;
  std::filesystem::path manifest_file(const ModelName& name) const;
  void write_manifest(const ModelName& name, const Manifest& m) const;
  // Removes the manifest; blobs no other manifest uses go too (when no create runs).
  bool remove(const ModelName& name) const;

  struct Entry {
    ModelName name;
    std::filesystem::file_time_type modified;
  };
  std::vector<Entry> list() const;

  // Removes temp files and unreferenced blobs if no writer holds the lock.
  void collect_garbage() const;

 private:
  // The manifest file, reached without following a symlink, if there is one.
  std::optional<std::filesystem::path> existing_manifest(const ModelName& name) const;

  std::filesystem::path root_;
};

// Held by a create from its first blob until its manifest is written: garbage
// collection waits for no writer, so blobs not yet referenced survive.
class WriterLock {
 public:
  explicit WriterLock(const Store& store);
  ~WriterLock();
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

 private:
  int fd_ = -1;
};

// Streams bytes into a temp file in the store's tmp dir while hashing them; commit()
// fsyncs and renames it to blobs/sha256-<hex>. Destroyed uncommitted, it removes the
// temp file.
class BlobWriter {
 public:
  explicit BlobWriter(const Store& store);
  ~BlobWriter();
  BlobWriter(const BlobWriter&) = delete;
  BlobWriter& operator=(const BlobWriter&) = delete;

  void write(const void* data, size_t size);
  uint64_t size() const { return size_; }
  Layer commit(const std::string& name);

 private:
  const Store& store_;
  std::filesystem::path temp_;
  int fd_ = -1;
  uint64_t size_ = 0;
  Sha256 hash_;
};

}  // namespace heron::store
