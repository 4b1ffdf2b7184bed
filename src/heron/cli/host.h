#pragma once
// Where the heron server listens ($HERON_HOST), shared by `heron serve` and its clients,
// and the directory heron keeps its own files in.
#include <filesystem>
#include <string>

namespace heron::cli {

struct HostAddress {
  std::string host;
  int port;
  std::string url() const;  // "http://host:port"
};

// "host", "host:port" or "http://host:port"; empty means 127.0.0.1:11435.
HostAddress parse_host(std::string text);
// $HERON_HOST, parsed.
HostAddress heron_host();

// $HERON_MODELS' parent when set, else ~/.heron: the server log and the chat history
// live here.
std::filesystem::path heron_home();

}  // namespace heron::cli
