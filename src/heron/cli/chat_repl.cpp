#include "heron/cli/chat_repl.h"

#include <cstdio>
#include <iostream>
#include <sstream>
#include <vector>

#include "heron/cli/answer_stream.h"
#include "heron/cli/chat_parameters.h"
#include "heron/cli/host.h"
#include "heron/cli/interrupt.h"
#include "heron/cli/line_editor.h"
#include "heron/cli/show_view.h"
#include "heron/cli/timing_stats.h"

namespace heron::cli {

namespace {

using json = nlohmann::json;

const char* kHelp =
    "Available Commands:\n"
    "  /set            Set session variables\n"
    "  /show           Show model information\n"
    "  /clear          Clear session context\n"
    "  /bye            Exit\n"
    "  /?, /help       Help for a command\n"
    "\n"
    "Use \"\"\" to begin a multi-line message.\n"
    "Ctrl-C stops an answer; Ctrl-D or /bye leaves.\n";

const char* kSetHelp =
    "Available Commands:\n"
    "  /set parameter NAME VALUE   Set a parameter (temperature, top_k, top_p, min_p, seed,\n"
    "                              num_predict, num_ctx, repeat_penalty, repeat_last_n,\n"
    "                              presence_penalty, frequency_penalty, stop WORD...)\n"
    "  /set system TEXT            Set the system message\n"
    "  /set verbose, /set quiet    Show or hide the timings after each answer\n"
    "  /set wordwrap, /set nowordwrap\n";

const char* kShowHelp =
    "Available Commands:\n"
    "  /show info         Show details for this model\n"
    "  /show license      Show the model's license\n"
    "  /show modelfile    Show the model's Modelfile\n"
    "  /show parameters   Show the parameters in use\n"
    "  /show system       Show the system message\n"
    "  /show template     Show the prompt template\n";

std::vector<std::string> words_of(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

// Text after the first `n` words of `line`, as typed.
std::string rest_after_words(const std::string& line, int n) {
  size_t i = 0;
  for (int w = 0; w < n; ++w) {
    i = line.find_first_not_of(" \t", i);
    i = line.find_first_of(" \t", i);
    if (i == std::string::npos) return "";
  }
  return trim(line.substr(i));
}

class Chat {
 public:
  Chat(const ApiClient& client, ChatSettings settings)
      : client_(client), s_(std::move(settings)), editor_(history_file()) {}

  int run() {
    while (true) {
      auto in = editor_.read(">>> ");
      if (in.outcome == LineEditor::Outcome::Interrupted) {
        std::cout << "\nUse Ctrl + d or /bye to exit.\n";
        continue;
      }
      if (in.outcome == LineEditor::Outcome::EndOfInput) break;
      std::string text = in.text;
      if (trim(text).rfind("\"\"\"", 0) == 0 && !read_multiline(text)) continue;
      editor_.remember(text);
      if (trim(text).empty()) continue;
      try {
        if (text[0] == '/') {
          if (!command(trim(text))) break;
        } else {
          ask(text);
        }
      } catch (const Error& e) {
        std::cout << std::flush;
        std::cerr << "Error: " << e.what() << "\n";
      }
    }
    std::cout << "\n";
    return 0;
  }

 private:
  static std::optional<std::filesystem::path> history_file() {
    try {
      const auto home = heron_home();
      std::filesystem::create_directories(home);
      return home / "history";
    } catch (const std::exception&) {
      return std::nullopt;  // no place for history: chat without it
    }
  }

  // `text` begins with """: reads lines until one ends with """; the message is what
  // lies between. False when abandoned with Ctrl-C or Ctrl-D.
  bool read_multiline(std::string& text) {
    std::string body = trim(text).substr(3);
    auto closed = [](const std::string& s) { return s.size() >= 3 && s.ends_with("\"\"\""); };
    while (!closed(trim(body))) {
      auto more = editor_.read("... ");
      if (more.outcome != LineEditor::Outcome::Line) {
        std::cout << "\n";
        return false;
      }
      body += "\n" + more.text;
    }
    body = trim(body);
    text = trim(body.substr(0, body.size() - 3));
    return true;
  }

  // A slash command; false for /bye.
  bool command(const std::string& line) {
    const auto words = words_of(line);
    const std::string& cmd = words[0];
    if (cmd == "/bye" || cmd == "/exit") return false;
    if (cmd == "/clear") {
      messages_.clear();
      std::cout << "Cleared session context\n";
    } else if (cmd == "/set") {
      set(line, words);
    } else if (cmd == "/show") {
      show(words);
    } else if (cmd == "/?" || cmd == "/help") {
      const std::string topic = words.size() > 1 ? words[1] : "";
      std::cout << (topic == "set" ? kSetHelp : topic == "show" ? kShowHelp : kHelp);
    } else {
      std::cout << "Unknown command '" << cmd << "'. Type /? for help\n";
    }
    return true;
  }

  void set(const std::string& line, const std::vector<std::string>& words) {
    const std::string what = words.size() > 1 ? words[1] : "";
    if (what == "parameter") {
      if (words.size() < 4) {
        std::cout << "Usage: /set parameter NAME VALUE\n";
        return;
      }
      const std::vector<std::string> values(words.begin() + 3, words.end());
      s_.options[words[2]] = parameter_value(words[2], values);
      std::string shown;
      for (size_t i = 0; i < values.size(); ++i) shown += (i ? ", " : "") + values[i];
      std::cout << "Set parameter '" << words[2] << "' to '" << shown << "'\n";
    } else if (what == "system") {
      std::string text = rest_after_words(line, 2);
      if (text.size() >= 2 && text.front() == '"' && text.back() == '"') {
        text = text.substr(1, text.size() - 2);
      }
      s_.system = text;
      std::cout << "Set system message.\n";
    } else if (what == "verbose" || what == "quiet") {
      s_.verbose = what == "verbose";
      std::cout << "Set '" << what << "' mode.\n";
    } else if (what == "wordwrap" || what == "nowordwrap") {
      s_.word_wrap = what == "wordwrap";
      std::cout << "Set '" << what << "' mode.\n";
    } else {
      std::cout << kSetHelp;
    }
  }

  void show(const std::vector<std::string>& words) {
    const std::string what = words.size() > 1 ? words[1] : "";
    if (what.empty()) {
      std::cout << kShowHelp;
      return;
    }
    const json reply = client_.post("/api/show", {{"model", s_.model}});
    auto field_or = [&](const char* field, const char* none) {
      const std::string v = reply.value(field, "");
      std::cout << (v.empty() ? none : v) << "\n";
    };
    if (what == "info") {
      print_model_overview(std::cout, reply);
    } else if (what == "modelfile") {
      print_show_field(std::cout, reply, "modelfile");
    } else if (what == "license") {
      field_or("license", "No license was specified for this model.");
    } else if (what == "template") {
      field_or("template", "No prompt template was specified for this model.");
    } else if (what == "system") {
      if (s_.system) {
        std::cout << *s_.system << "\n";
      } else {
        field_or("system", "No system message was specified for this model.");
      }
    } else if (what == "parameters") {
      if (!s_.options.empty()) {
        std::cout << "User defined parameters:\n";
        for (const auto& [k, v] : s_.options.items()) {
          std::printf("%-30s %s\n", k.c_str(), v.dump().c_str());
        }
        std::cout << "\n";
      }
      std::cout << "Model defined parameters:\n";
      field_or("parameters", "No additional parameters were specified for this model.");
    } else {
      std::cout << "Unknown command '/show " << what << "'. Type /? show for help\n";
    }
    std::cout << std::flush;
  }

  void ask(const std::string& text) {
    messages_.push_back({{"role", "user"}, {"content", text}});
    json messages = json::array();
    if (s_.system) messages.push_back({{"role", "system"}, {"content", *s_.system}});
    for (const auto& m : messages_) messages.push_back(m);
    json body = {{"model", s_.model}, {"messages", messages}};
    if (!s_.options.empty()) body["options"] = s_.options;
    if (s_.keep_alive) body["keep_alive"] = *s_.keep_alive;
    if (s_.format) body["format"] = *s_.format;
    AnswerPrinter printer(std::cout, wrap_width(s_.word_wrap));
    interrupted().store(false);
    Answer answer;
    try {
      answer = stream_answer(client_, "/api/chat", body, printer, interrupted());
    } catch (...) {
      messages_.pop_back();  // the question got no answer: ask it again later
      throw;
    }
    if (answer.cancelled) {
      messages_.pop_back();
      std::cout << "\n" << std::flush;
      return;
    }
    messages_.push_back({{"role", "assistant"}, {"content", answer.text}});
    std::cout << "\n\n" << std::flush;
    if (s_.verbose) print_timing_stats(std::cerr, answer.final_line);
  }

  const ApiClient& client_;
  ChatSettings s_;
  LineEditor editor_;
  std::vector<json> messages_;
};

}  // namespace

int run_chat(const ApiClient& client, ChatSettings settings) {
  // Load the model before the first prompt, as ollama does, so the first answer starts
  // at once.
  json load = {{"model", settings.model}, {"messages", json::array()}};
  if (settings.keep_alive) load["keep_alive"] = *settings.keep_alive;
  client.post("/api/chat", load);
  catch_interrupts();
  return Chat(client, std::move(settings)).run();
}

}  // namespace heron::cli
