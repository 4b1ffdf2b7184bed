// heron: one binary, many subcommands.
#include <functional>
#include <iostream>
#include <map>

#include "heron/cli/args.h"
#include "heron/cli/commands.h"

namespace {

using Command = std::function<int(const std::vector<std::string>&)>;

const std::map<std::string, std::pair<Command, std::string>>& commands() {
  static const std::map<std::string, std::pair<Command, std::string>> table = {
      {"create", {heron::cli::run_create, "import a model into the store from a Modelfile"}},
      {"generate", {heron::cli::run_generate, "answer one prompt with a model"}},
      {"render", {heron::cli::run_render, "print the prompt a chat template makes of messages"}},
      {"runner", {heron::cli::run_runner, "serve one model to `heron serve` (internal)"}},
      {"serve", {heron::cli::run_serve, "answer the Ollama and OpenAI HTTP APIs"}},
      {"tokenize",
       {heron::cli::run_tokenize, "print the tokens a model's tokenizer makes of text"}},
      {"detokenize", {heron::cli::run_detokenize, "print the text of token ids"}},
      {"run",
       {heron::cli::run_run, "answer a prompt or chat with a model (starts serve if needed)"}},
      {"list", {heron::cli::run_list, "list the models the server can run (alias: ls)"}},
      {"show", {heron::cli::run_show, "show what the server knows of a model"}},
      {"ps", {heron::cli::run_ps, "list the loaded models"}},
      {"rm", {heron::cli::run_rm, "remove models from the store"}},
      {"cp", {heron::cli::run_cp, "copy a model under a new name"}},
      {"stop", {heron::cli::run_stop, "unload a running model"}},
  };
  return table;
}

// Other names a command answers to, as in Ollama.
std::string canonical(const std::string& name) {
  return name == "ls" ? "list" : name;
}

void print_help() {
  std::cout << "usage: heron COMMAND [flags]\n\ncommands:\n";
  for (const auto& [name, entry] : commands()) {
    std::cout << "  " << name << std::string(12 - name.size(), ' ') << entry.second << "\n";
  }
  std::cout << "\nheron COMMAND --help (or heron help COMMAND) shows a command's flags;\n"
               "heron --version shows this client's version and the server's.\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || (args[0] == "help" && args.size() == 1)) {
    print_help();
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "help") args = {args[1], "--help"};  // `heron help run` = `heron run --help`
  const bool version = args[0] == "--version" || args[0] == "-v";
  const std::string name = version ? "version" : canonical(args[0]);
  auto it = commands().find(name);
  if (!version && it == commands().end()) {
    std::cerr << "heron: unknown command '" << args[0] << "' (see heron help)\n";
    return 2;
  }
  try {
    if (version) return heron::cli::print_version();
    return it->second.first(std::vector<std::string>(args.begin() + 1, args.end()));
  } catch (const heron::cli::UsageError& e) {
    std::cerr << "heron " << name << ": " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "heron " << name << ": error: " << e.what() << "\n";
    return 1;
  }
}
