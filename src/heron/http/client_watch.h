#pragma once
// Tells a handler that waits for a non-streaming answer whether its client is still
// there. cpp-httplib 0.11 does not hand handlers their socket, so the watch finds it
// among the process's descriptors by the connection's two addresses.
#include <string>

namespace httplib {
struct Request;
}

namespace heron::http {

class ClientWatch {
 public:
  explicit ClientWatch(const httplib::Request& req);
  // True once the peer has closed or reset the connection. Unknown socket: false.
  bool gone() const;

 private:
  int fd_ = -1;
};

}  // namespace heron::http
