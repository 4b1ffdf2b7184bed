#pragma once
// Model names and blob digests: the only user text that becomes a path in the store,
// so both are validated strictly before they do.
#include <filesystem>
#include <optional>
#include <string>

namespace heron::store {

// `[namespace/]name[:tag]`; the tag defaults to "latest". Each part is 1..80 characters
// of [A-Za-z0-9._-], starts with a letter or digit and contains no "..".
struct ModelName {
  std::string space;  // "" for no namespace (also what "library/" means)
  std::string name;
  std::string tag;

  // Throws heron::Error naming the problem.
  static ModelName parse(const std::string& text);
  // "name:tag" or "space/name:tag".
  std::string str() const;
  // manifests/<space or library>/<name>/<tag> relative to the store root.
  std::filesystem::path manifest_path() const;
  bool operator==(const ModelName&) const = default;
};

// "sha256:<64 lowercase hex>" -> the 64 hex digits; anything else throws heron::Error.
std::string digest_hex(const std::string& digest);
// True for exactly 64 lowercase hex digits.
bool is_hex64(const std::string& text);

}  // namespace heron::store
