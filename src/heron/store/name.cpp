#include "heron/store/name.h"

#include <cctype>

#include "heron/core/error.h"

namespace heron::store {

namespace {

constexpr size_t kMaxPart = 80;
// Names without a namespace live under this one (as in Ollama), so every manifest sits
// at the same depth and `x:y` cannot collide with a namespace `x`.
const std::string kDefaultSpace = "library";

void check_part(const std::string& part, const char* what, const std::string& text) {
  auto bad = [&](const std::string& why) {
    throw Error("invalid model name '" + text + "': " + what + " " + why);
  };
  if (part.empty()) bad("is empty");
  if (part.size() > kMaxPart) bad("is longer than " + std::to_string(kMaxPart) + " characters");
  if (!std::isalnum(static_cast<unsigned char>(part[0]))) {
    bad("must start with a letter or digit");
  }
  for (char c : part) {
    const auto u = static_cast<unsigned char>(c);
    if (!(std::isalnum(u) || c == '.' || c == '_' || c == '-')) {
      bad("may hold only letters, digits, '.', '_' and '-'");
    }
  }
  if (part.find("..") != std::string::npos) bad("must not contain '..'");
}

}  // namespace

ModelName ModelName::parse(const std::string& text) {
  ModelName n;
  std::string rest = text;
  if (auto colon = rest.rfind(':'); colon != std::string::npos) {
    n.tag = rest.substr(colon + 1);
    rest = rest.substr(0, colon);
  } else {
    n.tag = "latest";
  }
  if (auto slash = rest.find('/'); slash != std::string::npos) {
    n.space = rest.substr(0, slash);
    rest = rest.substr(slash + 1);
    check_part(n.space, "namespace", text);
  }
  if (n.space == kDefaultSpace) n.space.clear();
  n.name = rest;
  check_part(n.name, "name", text);
  check_part(n.tag, "tag", text);
  return n;
}

std::string ModelName::str() const {
  return (space.empty() ? "" : space + "/") + name + ":" + tag;
}

std::filesystem::path ModelName::manifest_path() const {
  return std::filesystem::path("manifests") / (space.empty() ? kDefaultSpace : space) / name / tag;
}

bool is_hex64(const std::string& text) {
  if (text.size() != 64) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string digest_hex(const std::string& digest) {
  const std::string prefix = "sha256:";
  if (digest.rfind(prefix, 0) != 0 || !is_hex64(digest.substr(prefix.size()))) {
    throw Error("invalid blob digest '" + digest.substr(0, 100) +
                "' (expected sha256: and 64 lowercase hex digits)");
  }
  return digest.substr(prefix.size());
}

}  // namespace heron::store
