#pragma once
// The server's side of the runner's NDJSON stream: bytes arrive in arbitrary pieces;
// each complete line is parsed and checked against the shape the API handlers rely on
// (runner/ndjson.h writes it), so a confused or hostile runner yields a clear error
// instead of a type error deep in a response formatter.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "heron/http/ndjson_post.h"

namespace heron::server {

struct RunnerLine {
  nlohmann::json value;  // one NDJSON line, its shape checked
  bool broken = false;   // the stream cannot go on; `why` says how
  std::string why;
};

class RunnerLineReader {
 public:
  RunnerLineReader() : lines_(kMaxLineBytes) {}
  // A line longer than this is broken: no runner line comes near it (pieces are a few
  // tokens), and holding an endless line would grow without bound.
  static constexpr size_t kMaxLineBytes = size_t{16} << 20;

  // The lines completed by `data`; after a broken line nothing more is returned.
  std::vector<RunnerLine> feed(std::string_view data);
  // Whether a final line (done, error or broken) has been returned.
  bool final_seen() const { return final_seen_; }

 private:
  http::LineSplitter lines_;
  bool final_seen_ = false;
  bool broken_ = false;
};

// Parses and checks one line; a malformed one comes back broken.
RunnerLine parse_runner_line(std::string_view line);

}  // namespace heron::server
