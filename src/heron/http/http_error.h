#pragma once
// A failure with the HTTP status it should be answered with. Messages name the field
// or input at fault, so a client can fix the request from the message alone.
#include <string>

#include "heron/core/error.h"

namespace heron::http {

class HttpError : public Error {
 public:
  HttpError(int status, const std::string& message) : Error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

// A model name that names nothing: 404, and OpenAI's API says so with its own code.
class ModelNotFound : public HttpError {
 public:
  explicit ModelNotFound(const std::string& message) : HttpError(404, message) {}
};

inline HttpError bad_request(const std::string& message) {
  return HttpError(400, message);
}

}  // namespace heron::http
