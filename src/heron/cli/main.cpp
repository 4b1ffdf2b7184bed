// heron: one binary, many subcommands.
#include <cstring>
#include <functional>
#include <iostream>
#include <map>

#include "heron/cli/args.h"
#include "heron/cli/commands.h"
#include "heron/core/version.h"

namespace {

using Command = std::function<int(const std::vector<std::string>&)>;

const std::map<std::string, std::pair<Command, std::string>>& commands() {
  static const std::map<std::string, std::pair<Command, std::string>> table = {
      {"create", {heron::cli::run_create, "import a model into the store from a Modelfile"}},
      {"generate", {heron::cli::run_generate, "answer one prompt with a model"}},
      {"render", {heron::cli::run_render, "print the prompt a chat template makes of messages"}},
      {"runner", {heron::cli::run_runner, "serve one model to `heron serve` (internal)"}},
      {"serve", {heron::cli::run_serve, "answer the Ollama and OpenAI HTTP APIs"}},
      {"tokenize", {heron::cli::run_tokenize, "print the tokens a model's tokenizer makes of text"}},
      {"detokenize", {heron::cli::run_detokenize, "print the text of token ids"}},
  };
  return table;
}

void print_help() {
  std::cout << "usage: heron COMMAND [flags]\n\ncommands:\n";
  for (const auto& [name, entry] : commands()) {
    std::cout << "  " << name << std::string(12 - name.size(), ' ') << entry.second << "\n";
  }
  std::cout << "\nheron COMMAND --help shows a command's flags.\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "help") || !std::strcmp(argv[1], "--help")) {
    print_help();
    return argc < 2 ? 2 : 0;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::cout << "heron " << heron::version() << "\n";
    return 0;
  }
  auto it = commands().find(argv[1]);
  if (it == commands().end()) {
    std::cerr << "heron: unknown command '" << argv[1] << "' (see heron help)\n";
    return 2;
  }
  try {
    return it->second.first(std::vector<std::string>(argv + 2, argv + argc));
  } catch (const heron::cli::UsageError& e) {
    std::cerr << "heron " << argv[1] << ": " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "heron " << argv[1] << ": error: " << e.what() << "\n";
    return 1;
  }
}
