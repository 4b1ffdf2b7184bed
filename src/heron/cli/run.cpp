// `heron run NAME [PROMPT]`: answers a prompt (from the arguments and/or piped
// standard input) and exits, or chats interactively on a terminal. Starts `heron serve`
// when none answers.
#include <unistd.h>

#include <iostream>
#include <iterator>

#include "heron/cli/answer_stream.h"
#include "heron/cli/args.h"
#include "heron/cli/chat_parameters.h"
#include "heron/cli/chat_repl.h"
#include "heron/cli/commands.h"
#include "heron/cli/interrupt.h"
#include "heron/cli/server_launch.h"
#include "heron/cli/timing_stats.h"
#include "heron/server/keep_alive.h"

namespace heron::cli {

namespace {

const std::vector<FlagSpec> kFlags = {
    {"keepalive", true, "how long the model stays loaded afterwards (\"5m\", \"1h\", 0, -1)"},
    {"verbose", false, "print timings after each answer"},
    {"nowordwrap", false, "don't wrap answers at word boundaries"},
    {"options", true, "Ollama options as a JSON object ('{\"temperature\": 0, \"seed\": 1}')"},
    {"format", true, "the answer's format: json (a JSON object)"},
    {"help", false, "show this help"},
};

const char* kUsage =
    "usage: heron run NAME [PROMPT...] [flags]\n\n"
    "With a prompt, or text piped to standard input (which comes first), heron answers\n"
    "and exits; otherwise it starts a chat (type /? there for its commands).\n"
    "If no server answers at $HERON_HOST (127.0.0.1:11435) it starts `heron serve` in\n"
    "the background, its log in ~/.heron/serve.log (next to $HERON_MODELS when set),\n"
    "and waits up to $HERON_START_TIMEOUT seconds (30) for it.\n\n";

nlohmann::json parse_options(const Args& args) {
  const auto text = args.get("options");
  if (!text) return nlohmann::json::object();
  nlohmann::json options;
  try {
    options = nlohmann::json::parse(*text);
    check_options(options);
  } catch (const std::exception& e) {
    throw UsageError("--options: " + std::string(e.what()));
  }
  return options;
}

int answer_once(const ApiClient& client, const ChatSettings& s, const std::string& prompt) {
  nlohmann::json body = {{"model", s.model}, {"prompt", prompt}};
  if (!s.options.empty()) body["options"] = s.options;
  if (s.keep_alive) body["keep_alive"] = *s.keep_alive;
  if (s.format) body["format"] = *s.format;
  AnswerPrinter printer(std::cout, wrap_width(s.word_wrap));
  // Ctrl-C closes the stream (the server cancels the answer) and ends the program with
  // status 0, as `ollama run` does.
  catch_interrupts();
  const Answer answer = stream_answer(client, "/api/generate", body, printer, interrupted());
  std::cout << "\n" << std::flush;
  if (s.verbose && !answer.cancelled) print_timing_stats(std::cerr, answer.final_line);
  return 0;
}

}  // namespace

int run_run(const std::vector<std::string>& argv) {
  Args args("run", kFlags, argv);
  if (args.has("help")) {
    std::cout << kUsage << Args::usage("run", kFlags);
    return 0;
  }
  if (args.positional().empty()) throw UsageError("give the model to run");
  ChatSettings s;
  s.model = args.positional()[0];
  s.options = parse_options(args);
  s.verbose = args.has("verbose");
  if (const auto f = args.get("format")) {
    if (*f != "json") throw UsageError("--format must be json");
    s.format = *f;
  }
  s.word_wrap = !args.has("nowordwrap");
  if (const auto k = args.get("keepalive")) {
    try {
      server::parse_keep_alive(*k, "--keepalive");
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
    s.keep_alive = *k;
  }
  std::string prompt;
  for (size_t i = 1; i < args.positional().size(); ++i) {
    prompt += (i > 1 ? " " : "") + args.positional()[i];
  }
  const bool piped = !isatty(STDIN_FILENO);
  if (piped) {
    std::string in(std::istreambuf_iterator<char>(std::cin), {});
    if (!in.empty()) prompt = prompt.empty() ? in : in + " " + prompt;
    s.word_wrap = false;
  }
  const ApiClient client = connect_or_start_server();
  client.post("/api/show", {{"model", s.model}});  // an unknown model fails here, clearly
  if (piped || !prompt.empty()) return answer_once(client, s, prompt);
  return run_chat(client, std::move(s));
}

}  // namespace heron::cli
