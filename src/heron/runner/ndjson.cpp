#include "heron/runner/ndjson.h"

#include <cmath>

namespace heron::runner {

namespace {

int64_t nanos(double seconds) {
  return static_cast<int64_t>(std::llround(seconds * 1e9));
}

// The token's exact bytes ride along: its text alone may be a partial code point.
nlohmann::json entry(int id, const std::string& token, float logprob) {
  std::vector<int> bytes(token.begin(), token.end());
  for (auto& b : bytes) b &= 0xff;
  return {{"id", id}, {"token", token}, {"bytes", bytes}, {"logprob", logprob}};
}

nlohmann::json logprobs_json(const std::vector<engine::TokenLogprob>& logprobs) {
  auto out = nlohmann::json::array();
  for (const auto& lp : logprobs) {
    auto top = nlohmann::json::array();
    for (const auto& alt : lp.top) {
      top.push_back(entry(alt.id, alt.token, alt.logprob));
    }
    auto e = entry(lp.id, lp.token, lp.logprob);
    e["top_logprobs"] = std::move(top);
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

nlohmann::json event_json(const CompletionEvent& e) {
  using Kind = CompletionEvent::Kind;
  if (e.kind == Kind::Error) return {{"error", {{"status", e.status}, {"message", e.message}}}};
  nlohmann::json j = {{"content", e.piece.text}};
  if (!e.piece.logprobs.empty()) j["logprobs"] = logprobs_json(e.piece.logprobs);
  if (e.kind == Kind::Done) {
    const auto& s = e.stats;
    j["done"] = true;
    j["done_reason"] = s.done_reason;
    j["prompt_eval_count"] = s.prompt_tokens;
    j["prompt_eval_duration"] = nanos(s.prompt_seconds);
    j["cached_tokens"] = s.cached_tokens;
    j["eval_count"] = s.decode_tokens;
    j["eval_duration"] = nanos(s.decode_seconds);
    if (const auto& sp = s.speculation; sp.rounds > 0) {
      j["speculation"] = {
          {"rounds", sp.rounds}, {"drafted", sp.drafted}, {"accepted", sp.accepted}};
    }
  }
  return j;
}

}  // namespace heron::runner
