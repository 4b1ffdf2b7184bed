#pragma once
// Streaming SHA-256 (OpenSSL's libcrypto) for content-addressed store blobs.
#include <cstddef>
#include <memory>
#include <string>

namespace heron {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(const void* data, size_t size);
  // 64 lowercase hex digits; the object is spent afterwards.
  std::string hex_digest();

  static std::string of(const std::string& bytes);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace heron
