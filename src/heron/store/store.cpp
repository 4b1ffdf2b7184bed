#include "heron/store/store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "heron/core/error.h"

namespace heron::store {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail_errno(const std::string& what) {
  throw Error(what + ": " + std::strerror(errno));
}

void fsync_path(const fs::path& p, int flags) {
  int fd = ::open(p.c_str(), flags | O_CLOEXEC);
  if (fd < 0) fail_errno("cannot open " + p.string());
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) fail_errno("cannot fsync " + p.string());
}

// A directory inside the store: created when missing, refused when it is a symlink.
void ensure_dir(const fs::path& dir) {
  std::error_code ec;
  auto st = fs::symlink_status(dir, ec);
  if (st.type() == fs::file_type::not_found) {
    fs::create_directories(dir, ec);
    if (ec) throw Error("cannot create " + dir.string() + ": " + ec.message());
    return;
  }
  if (st.type() != fs::file_type::directory) {
    throw Error(dir.string() + " is not a directory (symlinks are not followed in the store)");
  }
}

bool is_real_dir(const fs::path& p) {
  std::error_code ec;
  return fs::symlink_status(p, ec).type() == fs::file_type::directory;
}

bool is_real_file(const fs::path& p) {
  std::error_code ec;
  return fs::symlink_status(p, ec).type() == fs::file_type::regular;
}

std::string read_no_follow(const fs::path& p) {
  int fd = ::open(p.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) fail_errno("cannot open " + p.string());
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      fail_errno("cannot read " + p.string());
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

int open_lock(const Store& s) {
  const fs::path p = s.root() / ".lock";
  int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) fail_errno("cannot open " + p.string());
  return fd;
}

}  // namespace

Store::Store(fs::path root) : root_(std::move(root)) {
  ensure_dir(root_);
  ensure_dir(root_ / "blobs");
  ensure_dir(root_ / "manifests");
  ensure_dir(tmp_dir());
  collect_garbage();
}

fs::path Store::default_root() {
  if (const char* v = std::getenv("HERON_MODELS"); v && *v) return v;
  const char* home = std::getenv("HOME");
  if (!home || !*home) throw Error("set HERON_MODELS or HOME to locate the model store");
  return fs::path(home) / ".heron" / "models";
}

fs::path Store::blob_path(const std::string& digest) const {
  const fs::path p = root_ / "blobs" / ("sha256-" + digest_hex(digest));
  if (!is_real_file(p))
    throw Error("blob " + digest + " is missing from the store " + root_.string());
  return p;
}

bool Store::has_blob(const std::string& digest) const {
  return is_real_file(root_ / "blobs" / ("sha256-" + digest_hex(digest)));
}

std::string Store::read_blob(const std::string& digest) const {
  auto bytes = read_no_follow(blob_path(digest));
  if ("sha256:" + Sha256::of(bytes) != digest) {
    throw Error("blob " + digest + " does not match its digest (the store is corrupt)");
  }
  return bytes;
}

Layer Store::write_blob(const std::string& bytes, const std::string& name) const {
  BlobWriter w(*this);
  w.write(bytes.data(), bytes.size());
  return w.commit(name);
}

fs::path Store::manifest_file(const ModelName& name) const {
  return root_ / name.manifest_path();
}

std::optional<fs::path> Store::existing_manifest(const ModelName& name) const {
  const fs::path rel = name.manifest_path();
  fs::path path = root_;
  for (auto it = rel.begin(); it != rel.end(); ++it) {
    path /= *it;
    if (std::next(it) == rel.end()) break;
    if (!is_real_dir(path)) return std::nullopt;
  }
  if (!is_real_file(path)) return std::nullopt;
  return path;
}

std::optional<Manifest> Store::read_manifest(const ModelName& name) const {
  const auto path = existing_manifest(name);
  if (!path) return std::nullopt;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_no_follow(*path));
  } catch (const nlohmann::json::exception& e) {
    throw Error(path->string() + ": invalid manifest JSON: " + e.what());
  }
  return Manifest::from_json(j, "manifest of " + name.str());
}

void Store::write_manifest(const ModelName& name, const Manifest& m) const {
  for (const auto& l : m.files) blob_path(l.digest);
  blob_path(m.settings.digest);
  const fs::path rel = name.manifest_path();
  fs::path dir = root_;
  for (auto it = rel.begin(); std::next(it) != rel.end(); ++it) {
    dir /= *it;
    ensure_dir(dir);
  }
  const std::string text = m.to_json().dump(2) + "\n";
  fs::path temp = tmp_dir() / "manifest-XXXXXX";
  std::string tmpl = temp.string();
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) fail_errno("cannot create a temp file in " + tmp_dir().string());
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      ::unlink(tmpl.c_str());
      fail_errno("cannot write " + tmpl);
    }
    done += static_cast<size_t>(n);
  }
  const bool ok = ::fchmod(fd, 0644) == 0 && ::fsync(fd) == 0;
  ::close(fd);
  const fs::path target = root_ / rel;
  if (!ok || ::rename(tmpl.c_str(), target.c_str()) != 0) {
    const int saved = errno;
    ::unlink(tmpl.c_str());
    errno = saved;
    fail_errno("cannot write manifest " + target.string());
  }
  fsync_path(target.parent_path(), O_RDONLY | O_DIRECTORY);
}

bool Store::remove(const ModelName& name) const {
  // Even a damaged manifest can be removed.
  const auto existing = existing_manifest(name);
  if (!existing) return false;
  const fs::path target = *existing;
  if (::unlink(target.c_str()) != 0) fail_errno("cannot remove " + target.string());
  // Empty name/namespace directories go too (never the manifests root).
  std::error_code ec;
  for (fs::path dir = target.parent_path(); dir != root_ / "manifests"; dir = dir.parent_path()) {
    if (!fs::remove(dir, ec)) break;  // not empty
  }
  collect_garbage();
  return true;
}

std::vector<Store::Entry> Store::list() const {
  std::vector<Entry> out;
  std::error_code ec;
  const fs::path base = root_ / "manifests";
  for (auto it = fs::recursive_directory_iterator(base, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it.depth() > 2) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_symlink(ec) || !it->is_regular_file(ec) || it.depth() != 2) continue;
    const fs::path rel = fs::relative(it->path(), base, ec);
    auto parts = std::vector<std::string>(rel.begin(), rel.end());
    if (parts.size() != 3) continue;
    try {
      auto name = ModelName::parse(parts[0] + "/" + parts[1] + ":" + parts[2]);
      out.push_back({name, fs::last_write_time(it->path(), ec)});
    } catch (const Error&) {
      // A file heron did not write; not a model.
    }
  }
  return out;
}

void Store::collect_garbage() const {
  int fd = open_lock(*this);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return;  // a create is running; its temp files and fresh blobs must stay
  }
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(tmp_dir(), ec)) fs::remove(e.path(), ec);
  std::set<std::string> used;
  for (const auto& entry : list()) {
    try {
      if (auto m = read_manifest(entry.name)) {
        used.insert("sha256-" + digest_hex(m->settings.digest));
        for (const auto& l : m->files) used.insert("sha256-" + digest_hex(l.digest));
      }
    } catch (const Error&) {
      // A broken manifest keeps everything: never delete what might be in use.
      ::close(fd);
      return;
    }
  }
  for (const auto& e : fs::directory_iterator(root_ / "blobs", ec)) {
    if (!used.count(e.path().filename().string())) fs::remove(e.path(), ec);
  }
  ::close(fd);
}

WriterLock::WriterLock(const Store& store) : fd_(open_lock(store)) {
  if (::flock(fd_, LOCK_SH) != 0) {
    ::close(fd_);
    fail_errno("cannot lock the model store");
  }
}

WriterLock::~WriterLock() {
  ::close(fd_);
}

BlobWriter::BlobWriter(const Store& store) : store_(store) {
  std::string tmpl = (store.tmp_dir() / "blob-XXXXXX").string();
  fd_ = ::mkstemp(tmpl.data());
  if (fd_ < 0) fail_errno("cannot create a temp file in " + store.tmp_dir().string());
  temp_ = tmpl;
}

BlobWriter::~BlobWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!temp_.empty()) ::unlink(temp_.c_str());
}

void BlobWriter::write(const void* data, size_t size) {
  hash_.update(data, size);
  const char* p = static_cast<const char*>(data);
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd_, p + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail_errno("cannot write " + temp_.string());
    done += static_cast<size_t>(n);
  }
  size_ += size;
}

Layer BlobWriter::commit(const std::string& name) {
  Layer l{name, "sha256:" + hash_.hex_digest(), size_};
  // Readable by all, writable by the owner, as files the store copies in usually are.
  if (::fchmod(fd_, 0644) != 0 || ::fsync(fd_) != 0) fail_errno("cannot sync " + temp_.string());
  ::close(fd_);
  fd_ = -1;
  const fs::path target = store_.root() / "blobs" / ("sha256-" + digest_hex(l.digest));
  // Two creates writing the same blob rename identical bytes onto one name: both fine.
  if (::rename(temp_.c_str(), target.c_str()) != 0) fail_errno("cannot store " + target.string());
  temp_.clear();
  fsync_path(target.parent_path(), O_RDONLY | O_DIRECTORY);
  return l;
}

}  // namespace heron::store
