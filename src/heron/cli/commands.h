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
// Clients of a running `heron serve` (Ollama's CLI).
int run_run(const std::vector<std::string>& args);
int run_list(const std::vector<std::string>& args);
int run_show(const std::vector<std::string>& args);
int run_ps(const std::vector<std::string>& args);
int run_rm(const std::vector<std::string>& args);
int run_cp(const std::vector<std::string>& args);
int run_stop(const std::vector<std::string>& args);
// Prints this client's version and, when a server answers, the server's.
int print_version();

}  // namespace heron::cli
