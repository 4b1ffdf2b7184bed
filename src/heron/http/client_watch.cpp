#include "heron/http/client_watch.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstdlib>
#include <cstring>

#include <httplib.h>

namespace heron::http {

namespace {

// "addr:port" of a socket end, or "" when it is not an IP socket.
std::string endpoint(const sockaddr_storage& ss) {
  char host[INET6_ADDRSTRLEN] = {};
  int port = 0;
  if (ss.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(ss);
    inet_ntop(AF_INET, &in.sin_addr, host, sizeof host);
    port = ntohs(in.sin_port);
  } else if (ss.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(ss);
    inet_ntop(AF_INET6, &in6.sin6_addr, host, sizeof host);
    port = ntohs(in6.sin6_port);
  } else {
    return "";
  }
  return std::string(host) + ":" + std::to_string(port);
}

bool matches(int fd, const std::string& peer, const std::string& local) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0 || endpoint(ss) != peer) {
    return false;
  }
  len = sizeof ss;
  return getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0 && endpoint(ss) == local;
}

}  // namespace

ClientWatch::ClientWatch(const httplib::Request& req) {
  const std::string peer = req.remote_addr + ":" + std::to_string(req.remote_port);
  const std::string local = req.local_addr + ":" + std::to_string(req.local_port);
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return;
  while (const dirent* e = readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || fd == dirfd(dir)) continue;
    if (matches(static_cast<int>(fd), peer, local)) {
      fd_ = static_cast<int>(fd);
      break;
    }
  }
  closedir(dir);
}

bool ClientWatch::gone() const {
  if (fd_ < 0) return false;
  pollfd p{fd_, POLLIN | POLLRDHUP, 0};
  if (poll(&p, 1, 0) <= 0) return false;
  if (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) return true;
  char byte;  // readable: a pipelined next request (alive) or end of stream (gone)
  return recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

}  // namespace heron::http
