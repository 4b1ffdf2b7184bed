#include "heron/server/runner_lines.h"

#include <cmath>
#include <cstdint>
#include <utility>

#include "heron/http/http_error.h"
#include "heron/http/json_fields.h"

namespace heron::server {

namespace {

using json = nlohmann::json;

void check_logprob_entry(const json& e, const std::string& at) {
  if (!e.is_object()) throw http::bad_request(at + " must be an object");
  http::get_string(e, "token", at + ".token");
  http::get_number(e, "logprob", at + ".logprob", -INFINITY, 0);
  if (const json* bytes = http::get_array(e, "bytes", at + ".bytes")) {
    for (const auto& b : *bytes) {
      if (!b.is_number_integer() || b.get<int64_t>() < 0 || b.get<int64_t>() > 255) {
        throw http::bad_request(at + ".bytes must hold integers in [0, 255]");
      }
    }
  }
}

void check_logprobs(const json& line) {
  const json* entries = http::get_array(line, "logprobs", "logprobs");
  if (!entries) return;
  for (size_t i = 0; i < entries->size(); ++i) {
    const std::string at = "logprobs[" + std::to_string(i) + "]";
    check_logprob_entry((*entries)[i], at);
    if (const json* top = http::get_array((*entries)[i], "top_logprobs", at + ".top_logprobs")) {
      for (const auto& alt : *top) check_logprob_entry(alt, at + ".top_logprobs[]");
    }
  }
}

void check_error(const json& line) {
  const json* e = http::field(line, "error");
  if (!e || e->is_string()) return;
  if (!e->is_object()) throw http::bad_request("error must be an object or a string");
  http::get_int(*e, "status", "error.status", 400, 599);
  http::get_string(*e, "message", "error.message");
}

void check_shape(const json& line) {
  if (!line.is_object()) throw http::bad_request("a line must be a JSON object");
  http::get_string(line, "content", "content");
  http::get_bool(line, "done", "done");
  http::get_string(line, "done_reason", "done_reason");
  // Counts are summed as ints by the formatters (OpenAI's total_tokens).
  for (const char* k : {"prompt_eval_count", "cached_tokens", "eval_count"}) {
    http::get_int(line, k, k, 0, INT32_MAX / 2);
  }
  for (const char* k : {"prompt_eval_duration", "eval_duration"}) {
    http::get_int(line, k, k, 0, INT64_MAX);
  }
  if (const json* sp = http::field(line, "speculation")) {
    if (!sp->is_object()) throw http::bad_request("speculation must be an object");
    for (const char* k : {"rounds", "drafted", "accepted"}) {
      http::get_int(*sp, k, std::string("speculation.") + k, 0, INT32_MAX / 2);
    }
  }
  check_logprobs(line);
  check_error(line);
}

}  // namespace

RunnerLine parse_runner_line(std::string_view text) {
  RunnerLine line;
  try {
    line.value = json::parse(text);
    check_shape(line.value);
  } catch (const json::exception& e) {
    return {{}, true, std::string("the runner sent a malformed line: ") + e.what()};
  } catch (const http::HttpError& e) {
    return {{}, true, std::string("the runner sent a malformed line: ") + e.what()};
  }
  return line;
}

std::vector<RunnerLine> RunnerLineReader::feed(std::string_view data) {
  std::vector<RunnerLine> out;
  if (broken_) return out;
  for (const auto& text : lines_.feed(data)) {
    auto line = parse_runner_line(text);
    broken_ = line.broken;
    final_seen_ =
        final_seen_ || line.broken || line.value.contains("done") || line.value.contains("error");
    out.push_back(std::move(line));
    if (broken_) return out;
  }
  if (lines_.overflowed()) {
    broken_ = final_seen_ = true;
    out.push_back({{}, true, "the runner sent a line over the size limit"});
  }
  return out;
}

}  // namespace heron::server
