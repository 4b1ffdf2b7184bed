#include "heron/cache/disk_tier.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <random>

#include <mlx/allocator.h>
#include <mlx/ops.h>
#include <mlx/transforms.h>
#include <nlohmann/json.hpp>

#include "heron/core/error.h"
#include "heron/core/sha256.h"

namespace heron::cache {

namespace fs = std::filesystem;
namespace mx = mlx::core;
using nlohmann::json;

namespace {

constexpr char kMagic[8] = {'H', 'E', 'R', 'O', 'N', 'P', 'C', '1'};
constexpr uint64_t kMaxHeader = uint64_t{64} << 20;  // a 2M-token prefix fits
constexpr const char* kSuffix = ".snap";

const std::vector<std::pair<const char*, mx::Dtype>>& dtypes() {
  static const std::vector<std::pair<const char*, mx::Dtype>> table = {
      {"float32", mx::float32}, {"float16", mx::float16}, {"bfloat16", mx::bfloat16}};
  return table;
}

std::string dtype_name(mx::Dtype d) {
  for (const auto& [name, type] : dtypes()) {
    if (type == d) return name;
  }
  throw Error("the prefix cache's disk tier stores float tensors only");
}

mx::Dtype dtype_of(const std::string& name) {
  for (const auto& [n, type] : dtypes()) {
    if (name == n) return type;
  }
  throw Error("unknown tensor type '" + name + "'");
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             fs::file_time_type::clock::now().time_since_epoch())
      .count();
}

int64_t mtime_ns(const fs::path& p) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             fs::last_write_time(p).time_since_epoch())
      .count();
}

struct Header {
  json fields;
  uint64_t payload_offset = 0;
};

// Magic, header length and header of `in`; throws Error when any of them is wrong.
Header read_header(std::ifstream& in, uint64_t file_size) {
  char magic[8];
  uint64_t length = 0;
  if (!in.read(magic, 8) || std::memcmp(magic, kMagic, 8) != 0 ||
      !in.read(reinterpret_cast<char*>(&length), sizeof length) || length > kMaxHeader ||
      16 + length > file_size) {
    throw Error("not a prefix cache snapshot");
  }
  std::string text(length, '\0');
  if (!in.read(text.data(), static_cast<std::streamsize>(length))) throw Error("truncated header");
  Header h;
  try {
    h.fields = json::parse(text);
  } catch (const json::exception&) {
    throw Error("malformed header");
  }
  h.payload_offset = 16 + length;
  return h;
}

// The entry a header describes, checked for shape; throws Error.
DiskTier::Entry entry_of(const json& f, const std::string& model_key, uint64_t payload_offset,
                         uint64_t file_size) {
  DiskTier::Entry e;
  if (!f.is_object() || f.value("model", "") != model_key) throw Error("another model's");
  e.begin = f.at("begin").get<int>();
  e.tokens = f.at("tokens").get<std::vector<int>>();
  uint64_t payload = 0;
  for (const auto& cache : f.at("caches")) {
    for (const auto& t : cache) payload += t.at("nbytes").get<uint64_t>();
  }
  if (e.begin < 0 || e.end() <= e.begin || payload_offset + payload != file_size ||
      !f.at("sha256").is_string()) {
    throw Error("inconsistent header");
  }
  e.bytes = file_size;
  return e;
}

}  // namespace

DiskTier::DiskTier(fs::path dir, std::string model_key, size_t budget)
    : dir_(std::move(dir)), model_key_(std::move(model_key)), budget_(budget) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec || !fs::is_directory(dir_)) {
    throw Error("cannot create the prefix cache directory " + dir_.string() + ": " + ec.message());
  }
}

std::vector<DiskTier::Entry> DiskTier::scan() const {
  std::vector<Entry> entries;
  const auto stale_before = fs::file_time_type::clock::now() - std::chrono::minutes(10);
  std::error_code ec;
  for (const auto& item : fs::directory_iterator(dir_, ec)) {
    const auto& p = item.path();
    const std::string name = p.filename().string();
    if (name.starts_with(".tmp-")) {  // a write that never finished
      if (fs::last_write_time(p, ec) < stale_before) fs::remove(p, ec);
      continue;
    }
    if (!name.ends_with(kSuffix) || !item.is_regular_file(ec)) continue;
    try {
      std::ifstream in(p, std::ios::binary);
      const uint64_t size = fs::file_size(p);
      const Header h = read_header(in, size);
      Entry e = entry_of(h.fields, model_key_, h.payload_offset, size);
      e.file = p;
      e.used = mtime_ns(p);
      entries.push_back(std::move(e));
    } catch (const std::exception&) {
      fs::remove(p, ec);
    }
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::pair(a.begin, a.end()) < std::pair(b.begin, b.end());
  });
  return entries;
}

DiskTier::Entry DiskTier::write(std::vector<int> tokens, int begin,
                                const std::vector<std::vector<mx::array>>& caches) const {
  std::vector<mx::array> flat;  // every tensor, row-contiguous, in file order
  for (const auto& c : caches) {
    for (const auto& t : c) flat.push_back(mx::contiguous(t));
  }
  mx::eval(flat);
  json layout = json::array();
  Sha256 payload_hash;
  size_t next = 0;
  for (const auto& c : caches) {
    json tensors = json::array();
    for (size_t i = 0; i < c.size(); ++i) {
      const auto& t = flat[next++];
      tensors.push_back(
          {{"dtype", dtype_name(t.dtype())}, {"shape", t.shape()}, {"nbytes", t.nbytes()}});
      payload_hash.update(t.data<char>(), t.nbytes());
    }
    layout.push_back(std::move(tensors));
  }
  Sha256 key;
  const std::string id = model_key_ + ":" + std::to_string(begin) + ":" + json(tokens).dump();
  key.update(id.data(), id.size());
  const fs::path final_path = dir_ / (key.hex_digest() + kSuffix);
  const std::string header = json{{"model", model_key_},
                                  {"begin", begin},
                                  {"tokens", tokens},
                                  {"caches", layout},
                                  {"sha256", payload_hash.hex_digest()}}
                                 .dump();

  std::mt19937_64 rng(std::random_device{}());
  const fs::path tmp = dir_ / (".tmp-" + std::to_string(rng()));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw Error("cannot write " + tmp.string() + ": " + std::strerror(errno));
  auto put = [&](const void* data, size_t n) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
      const ssize_t w = ::write(fd, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;
      p += w;
      n -= static_cast<size_t>(w);
    }
    return true;
  };
  const uint64_t length = header.size();
  bool ok = put(kMagic, 8) && put(&length, sizeof length) && put(header.data(), header.size());
  for (const auto& t : flat) ok = ok && put(t.data<char>(), t.nbytes());
  ok = ok && ::fsync(fd) == 0;
  const int saved_errno = errno;
  ::close(fd);
  std::error_code ec;
  if (!ok) {
    fs::remove(tmp, ec);
    throw Error("cannot write " + tmp.string() + ": " + std::strerror(saved_errno));
  }
  fs::rename(tmp, final_path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw Error("cannot write " + final_path.string() + ": " + ec.message());
  }
  if (const int dir_fd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir_fd >= 0) {
    ::fsync(dir_fd);  // the rename itself survives a crash
    ::close(dir_fd);
  }
  Entry e;
  e.file = final_path;
  e.begin = begin;
  e.tokens = std::move(tokens);
  e.bytes = fs::file_size(final_path);
  e.used = mtime_ns(final_path);
  return e;
}

std::vector<std::vector<mx::array>> DiskTier::read(const Entry& entry) const {
  try {
    std::ifstream in(entry.file, std::ios::binary);
    if (!in) throw Error("missing");
    const uint64_t size = fs::file_size(entry.file);
    const Header h = read_header(in, size);
    const Entry found = entry_of(h.fields, model_key_, h.payload_offset, size);
    if (found.begin != entry.begin || found.tokens != entry.tokens) throw Error("replaced");
    Sha256 payload_hash;
    std::vector<std::vector<mx::array>> caches;
    for (const auto& cache : h.fields.at("caches")) {
      std::vector<mx::array> tensors;
      for (const auto& t : cache) {
        const auto shape = t.at("shape").get<mx::Shape>();
        const mx::Dtype dtype = dtype_of(t.at("dtype").get<std::string>());
        const auto nbytes = t.at("nbytes").get<uint64_t>();
        size_t count = 1;
        for (int d : shape) {
          if (d < 0) throw Error("negative dimension");
          count *= static_cast<size_t>(d);
        }
        if (count * mx::size_of(dtype) != nbytes) throw Error("shape and size disagree");
        mx::array a(mx::allocator::malloc(nbytes), shape, dtype);
        if (!in.read(a.data<char>(), static_cast<std::streamsize>(nbytes))) {
          throw Error("truncated payload");
        }
        payload_hash.update(a.data<char>(), nbytes);
        tensors.push_back(std::move(a));
      }
      caches.push_back(std::move(tensors));
    }
    if (payload_hash.hex_digest() != h.fields.at("sha256").get<std::string>()) {
      throw Error("checksum mismatch");
    }
    return caches;
  } catch (const std::exception& e) {
    remove(entry);
    throw Error("prefix cache snapshot " + entry.file.string() + " is unusable (" + e.what() +
                "); deleted it");
  }
}

void DiskTier::remove(const Entry& entry) const {
  std::error_code ec;
  fs::remove(entry.file, ec);
}

void DiskTier::touch(Entry& entry) const {
  std::error_code ec;
  fs::last_write_time(entry.file, fs::file_time_type::clock::now(), ec);
  entry.used = now_ns();
}

}  // namespace heron::cache
