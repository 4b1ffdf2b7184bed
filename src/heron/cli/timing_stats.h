#pragma once
// `--verbose` / `/set verbose`: the timings of an answer, in `ollama run --verbose`'s
// format, from the final line of a generate or chat stream.
#include <ostream>

#include <nlohmann/json.hpp>

namespace heron::cli {

void print_timing_stats(std::ostream& out, const nlohmann::json& final_line);

}  // namespace heron::cli
