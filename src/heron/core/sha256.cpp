#include "heron/core/sha256.h"

#include <openssl/evp.h>

#include "heron/core/error.h"

namespace heron {

struct Sha256::State {
  EVP_MD_CTX* ctx = nullptr;
};

Sha256::Sha256() : state_(std::make_unique<State>()) {
  state_->ctx = EVP_MD_CTX_new();
  if (!state_->ctx || EVP_DigestInit_ex(state_->ctx, EVP_sha256(), nullptr) != 1) {
    throw Error("sha256: cannot initialise OpenSSL digest");
  }
}

Sha256::~Sha256() {
  EVP_MD_CTX_free(state_->ctx);
}

void Sha256::update(const void* data, size_t size) {
  if (EVP_DigestUpdate(state_->ctx, data, size) != 1) throw Error("sha256: update failed");
}

std::string Sha256::hex_digest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(state_->ctx, digest, &len) != 1) throw Error("sha256: final failed");
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out;
}

std::string Sha256::of(const std::string& bytes) {
  Sha256 h;
  h.update(bytes.data(), bytes.size());
  return h.hex_digest();
}

}  // namespace heron
