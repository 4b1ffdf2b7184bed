#pragma once
#include <string>
#include <vector>

namespace heron::cli {

// Each subcommand takes the arguments after its name and returns the exit code.
int run_generate(const std::vector<std::string>& args);

}  // namespace heron::cli
