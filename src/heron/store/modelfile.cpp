#include "heron/store/modelfile.h"

#include <algorithm>
#include <sstream>

#include "heron/api/generation_params.h"
#include "heron/core/error.h"

namespace heron::store {

namespace {

using nlohmann::json;

// Options a model may default: every sampling and context option of GenerationParams.
const std::vector<std::string>& parameter_names() {
  static const std::vector<std::string> names = {"temperature",
                                                 "top_k",
                                                 "top_p",
                                                 "min_p",
                                                 "repeat_penalty",
                                                 "repeat_last_n",
                                                 "presence_penalty",
                                                 "frequency_penalty",
                                                 "seed",
                                                 "num_predict",
                                                 "num_ctx",
                                                 "stop"};
  return names;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

class Reader {
 public:
  Reader(const std::string& text, const std::string& source) : source_(source) {
    std::string line;
    std::istringstream in(text);
    while (std::getline(in, line)) lines_.push_back(line);
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(source_ + ":" + std::to_string(line_ + 1) + ": " + what);
  }

  bool next_instruction(std::string& keyword, std::string& rest) {
    for (; line_ < lines_.size(); ++line_) {
      const std::string t = trim(lines_[line_]);
      if (t.empty() || t[0] == '#') continue;
      const auto sp = t.find_first_of(" \t");
      keyword = lower(t.substr(0, sp));
      rest = sp == std::string::npos ? "" : trim(t.substr(sp));
      start_ = line_;
      return true;
    }
    return false;
  }

  // The value starting in `rest`: bare text, "quoted" or """multi-line""".
  std::string value(const std::string& rest, const char* what) {
    if (rest.empty()) fail(std::string(what) + " needs a value");
    if (rest.rfind("\"\"\"", 0) == 0) return triple_quoted(rest.substr(3));
    if (rest[0] == '"') return quoted(rest);
    return rest;
  }

  size_t start_line() const { return start_ + 1; }
  void advance() { ++line_; }

 private:
  std::string triple_quoted(std::string text) {
    std::string out;
    for (;;) {
      if (auto end = text.find("\"\"\""); end != std::string::npos) {
        if (!trim(text.substr(end + 3)).empty()) fail("unexpected text after closing \"\"\"");
        return out + text.substr(0, end);
      }
      out += text + "\n";
      if (++line_ >= lines_.size()) {
        line_ = start_;
        fail("unterminated \"\"\" (opened here)");
      }
      text = lines_[line_];
      if (!text.empty() && text.back() == '\r') text.pop_back();
    }
  }

  std::string quoted(const std::string& text) {
    std::string out;
    for (size_t i = 1; i < text.size(); ++i) {
      if (text[i] == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (text[i] == '"') {
        if (!trim(text.substr(i + 1)).empty()) fail("unexpected text after closing quote");
        return out;
      } else {
        out += text[i];
      }
    }
    fail("unterminated quoted string");
  }

  std::string source_;
  std::vector<std::string> lines_;
  size_t line_ = 0;
  size_t start_ = 0;
};

// Splits "first rest" at the first blank.
std::pair<std::string, std::string> split_word(const std::string& s) {
  const auto sp = s.find_first_of(" \t");
  if (sp == std::string::npos) return {s, ""};
  return {s.substr(0, sp), trim(s.substr(sp))};
}

void check_parameter_name(const std::string& name) {
  const auto& names = parameter_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    throw Error("unknown parameter '" + name + "'");
  }
}

}  // namespace

bool is_message_role(const std::string& role) {
  return role == "system" || role == "user" || role == "assistant";
}

void add_parameter(json& parameters, const std::string& name, const json& value) {
  check_parameter_name(name);
  api::GenerationParams check;
  api::read_ollama_options(json{{name, value}}, "parameter ", check);
  if (name == "stop") {
    if (!parameters.contains("stop")) parameters["stop"] = json::array();
    for (const auto& s : check.stop) parameters["stop"].push_back(s);
  } else {
    parameters[name] = value;
  }
}

void add_parameter_text(json& parameters, const std::string& name, const std::string& text) {
  check_parameter_name(name);
  if (name == "stop") return add_parameter(parameters, name, text);
  json value;
  try {
    value = json::parse(text);
  } catch (const json::exception&) {
    value = text;  // the range check below says what was expected
  }
  if (!value.is_number()) throw Error("parameter " + name + ": '" + text + "' is not a number");
  add_parameter(parameters, name, value);
}

Modelfile parse_modelfile(const std::string& text, const std::string& source, bool require_from) {
  Modelfile mf;
  Reader r(text, source);
  std::string keyword, rest;
  bool have_from = false;
  while (r.next_instruction(keyword, rest)) {
    if (keyword == "from" || keyword == "draft") {
      auto v = r.value(rest, keyword == "from" ? "FROM" : "DRAFT");
      if (keyword == "from") {
        if (have_from) r.fail("FROM given twice");
        mf.from = v;
        have_from = true;
      } else {
        if (mf.draft) r.fail("DRAFT given twice");
        mf.draft = v;
      }
    } else if (keyword == "parameter") {
      auto [name, value_text] = split_word(rest);
      if (name.empty()) r.fail("PARAMETER needs a name and a value");
      auto value = r.value(value_text, ("PARAMETER " + name).c_str());
      try {
        add_parameter_text(mf.settings.parameters, lower(name), value);
      } catch (const Error& e) {
        r.fail(e.what());
      }
    } else if (keyword == "template") {
      mf.settings.chat_template = r.value(rest, "TEMPLATE");
    } else if (keyword == "system") {
      mf.settings.system = r.value(rest, "SYSTEM");
    } else if (keyword == "license") {
      mf.settings.licenses.push_back(r.value(rest, "LICENSE"));
    } else if (keyword == "message") {
      auto [role, content] = split_word(rest);
      role = lower(role);
      if (!is_message_role(role)) {
        r.fail("MESSAGE role must be system, user or assistant, got '" + role + "'");
      }
      mf.settings.messages.push_back({role, r.value(content, "MESSAGE")});
    } else if (keyword == "adapter") {
      r.fail("ADAPTER is not supported");
    } else {
      r.fail("unknown instruction '" + keyword + "'");
    }
    r.advance();
  }
  if (require_from && !have_from) throw Error(source + ": no FROM instruction");
  return mf;
}

json ModelSettings::to_json() const {
  json messages_json = json::array();
  for (const auto& m : messages)
    messages_json.push_back({{"role", m.role}, {"content", m.content}});
  json j = {{"parameters", parameters}, {"messages", messages_json}, {"licenses", licenses}};
  if (chat_template) j["template"] = *chat_template;
  if (system) j["system"] = *system;
  return j;
}

ModelSettings ModelSettings::from_json(const json& j) {
  ModelSettings s;
  if (!j.is_object()) return s;
  if (j.contains("parameters") && j["parameters"].is_object()) s.parameters = j["parameters"];
  if (j.contains("template") && j["template"].is_string()) s.chat_template = j["template"];
  if (j.contains("system") && j["system"].is_string()) s.system = j["system"];
  for (const auto& m : j.value("messages", json::array())) {
    if (m.is_object() && m.value("role", "") != "" && m.contains("content") &&
        m["content"].is_string()) {
      s.messages.push_back({m["role"], m["content"]});
    }
  }
  for (const auto& l : j.value("licenses", json::array())) {
    if (l.is_string()) s.licenses.push_back(l);
  }
  return s;
}

std::string render_modelfile(const std::string& from, const ModelSettings& s,
                             const std::optional<std::string>& draft) {
  auto block = [](const std::string& text) { return "\"\"\"" + text + "\"\"\""; };
  std::string out = "FROM " + from + "\n";
  if (draft) out += "DRAFT " + *draft + "\n";
  if (s.chat_template) out += "TEMPLATE " + block(*s.chat_template) + "\n";
  if (s.system) out += "SYSTEM " + block(*s.system) + "\n";
  for (const auto& [name, value] : s.parameters.items()) {
    if (value.is_array()) {
      for (const auto& v : value) out += "PARAMETER " + name + " " + v.dump() + "\n";
    } else {
      out += "PARAMETER " + name + " " + value.dump() + "\n";
    }
  }
  for (const auto& m : s.messages) out += "MESSAGE " + m.role + " " + block(m.content) + "\n";
  for (const auto& l : s.licenses) out += "LICENSE " + block(l) + "\n";
  return out;
}

}  // namespace heron::store
