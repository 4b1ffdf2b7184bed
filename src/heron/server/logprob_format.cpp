#include "heron/server/logprob_format.h"

namespace heron::server {

namespace {

nlohmann::json one(const nlohmann::json& e) {
  return {{"token", e.value("token", "")},
          {"logprob", e.value("logprob", 0.0)},
          {"bytes", e.value("bytes", nlohmann::json::array())}};
}

}  // namespace

nlohmann::json client_logprobs(const nlohmann::json& runner_entries) {
  auto out = nlohmann::json::array();
  for (const auto& e : runner_entries) {
    auto entry = one(e);
    auto top = nlohmann::json::array();
    for (const auto& alt : e.value("top_logprobs", nlohmann::json::array()))
      top.push_back(one(alt));
    entry["top_logprobs"] = std::move(top);
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace heron::server
