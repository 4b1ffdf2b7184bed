#pragma once
// One JSON request to a leased runner and its JSON answer, for endpoints that do not
// stream (/embed). The runner's error statuses and messages pass through as
// http::HttpError; a runner that went away is a 500 saying so.
#include <string>

#include <nlohmann/json.hpp>

#include "heron/server/runner_pool.h"

namespace heron::server {

nlohmann::json call_runner(Lease& lease, const std::string& path, const nlohmann::json& body);

}  // namespace heron::server
