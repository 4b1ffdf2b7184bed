#pragma once
// The runner's NDJSON lines (DESIGN.md "Processes"): text pieces, then one final line
// with done, done_reason and stats, or {"error": {"status", "message"}}.
#include <nlohmann/json.hpp>

#include "heron/runner/completion_job.h"

namespace heron::runner {

nlohmann::json event_json(const CompletionEvent& event);

}  // namespace heron::runner
