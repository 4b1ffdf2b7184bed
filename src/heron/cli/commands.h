#pragma once
#include <string>
#include <vector>

namespace heron::cli {

// Each subcommand takes the arguments after its name and returns the exit code.
int run_create(const std::vector<std::string>& args);
int run_generate(const std::vector<std::string>& args);
int run_render(const std::vector<std::string>& args);
int run_runner(const std::vector<std::string>& args);
int run_serve(const std::vector<std::string>& args);
int run_tokenize(const std::vector<std::string>& args);
int run_detokenize(const std::vector<std::string>& args);

}  // namespace heron::cli
