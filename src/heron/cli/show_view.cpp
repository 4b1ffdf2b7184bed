#include "heron/cli/show_view.h"

#include <sstream>
#include <string>
#include <vector>

#include "heron/cli/human_format.h"

namespace heron::cli {

namespace {

using json = nlohmann::json;

std::string text(const json& j, const std::string& key) {
  if (!j.is_object() || !j.contains(key)) return "";
  const json& v = j[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return v.dump();
  return "";
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

void section(std::ostream& out, const std::string& title,
             const std::vector<std::vector<std::string>>& rows) {
  if (rows.empty()) return;
  out << "  " << title << "\n";
  std::ostringstream table;
  print_table(table, rows);
  for (const auto& line : lines_of(table.str())) out << "    " << line << "\n";
  out << "\n";
}

}  // namespace

void print_model_overview(std::ostream& out, const json& show) {
  const json details = show.value("details", json::object());
  const json info = show.value("model_info", json::object());
  std::string arch = text(info, "general.architecture");
  if (arch.empty()) arch = text(details, "family");
  std::vector<std::vector<std::string>> model;
  auto add = [&](const std::string& label, const std::string& value) {
    if (!value.empty()) model.push_back({label, value});
  };
  add("architecture", arch);
  add("parameters", text(details, "parameter_size"));
  add("context length", text(info, arch + ".context_length"));
  add("embedding length", text(info, arch + ".embedding_length"));
  add("quantization", text(details, "quantization_level"));
  add("format", text(details, "format"));
  section(out, "Model", model);

  // The draft model that speculates for it (Modelfile DRAFT).
  const json draft = show.value("draft", json::object());
  const json draft_details = draft.value("details", json::object());
  std::vector<std::vector<std::string>> draft_rows;
  auto add_draft = [&](const std::string& label, const std::string& value) {
    if (!value.empty()) draft_rows.push_back({label, value});
  };
  add_draft("from", text(draft, "from"));
  add_draft("architecture", text(draft_details, "family"));
  add_draft("parameters", text(draft_details, "parameter_size"));
  add_draft("quantization", text(draft_details, "quantization_level"));
  section(out, "Draft", draft_rows);

  std::vector<std::vector<std::string>> capabilities;
  if (show.contains("capabilities") && show["capabilities"].is_array()) {
    for (const auto& c : show["capabilities"]) {
      if (c.is_string()) capabilities.push_back({c.get<std::string>()});
    }
  }
  section(out, "Capabilities", capabilities);

  auto text_section = [&](const std::string& title, const std::string& field, size_t max_lines) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& line : lines_of(text(show, field))) {
      if (rows.size() == max_lines) {
        rows.push_back({"..."});
        break;
      }
      rows.push_back({line});
    }
    section(out, title, rows);
  };
  text_section("Parameters", "parameters", SIZE_MAX);
  text_section("System", "system", 2);
  text_section("License", "license", 2);
}

void print_show_field(std::ostream& out, const json& show, const char* field) {
  out << text(show, field) << "\n";
}

}  // namespace heron::cli
