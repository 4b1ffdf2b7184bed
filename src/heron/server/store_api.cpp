#include "heron/server/store_api.h"

#include <atomic>
#include <filesystem>
#include <memory>

#include "heron/core/channel.h"
#include "heron/core/sha256.h"
#include "heron/core/worker.h"
#include "heron/http/http_error.h"
#include "heron/http/json_fields.h"
#include "heron/http/responses.h"
#include "heron/model/encoder_loader.h"
#include "heron/server/time_format.h"
#include "heron/store/create.h"
#include "heron/store/model_template.h"
#include "heron/store/quantize_plan.h"
#include "heron/store/store.h"

namespace heron::server {

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

std::string model_field(const json& body) {
  auto name = http::get_string(body, "model", "model");
  if (!name) name = http::get_string(body, "name", "name");
  if (!name || name->empty()) throw http::bad_request("model is required");
  return *name;
}

store::ModelName parse_name(const std::string& text) {
  try {
    return store::ModelName::parse(text);
  } catch (const Error& e) {
    throw http::bad_request(e.what());
  }
}

// Ollama's JSON form, or a `modelfile` string; JSON fields override the Modelfile's.
store::CreateRequest parse_create(const json& body) {
  store::CreateRequest req;
  req.name = parse_name(model_field(body)).str();
  req.base_dir = fs::current_path();
  if (auto text = http::get_string(body, "modelfile", "modelfile")) {
    try {
      // Its FROM may come from the JSON "from" instead (checked below).
      req.modelfile = store::parse_modelfile(*text, "modelfile", /*require_from=*/false);
    } catch (const Error& e) {
      throw http::bad_request(e.what());
    }
  }
  auto& mf = req.modelfile;
  auto& s = mf.settings;
  if (auto v = http::get_string(body, "from", "from")) mf.from = *v;
  if (auto v = http::get_string(body, "draft", "draft")) mf.draft = *v;
  if (auto v = http::get_string(body, "quantize", "quantize")) req.quantize = *v;
  if (auto v = http::get_string(body, "draft_quantize", "draft_quantize")) req.draft_quantize = *v;
  if (auto v = http::get_string(body, "template", "template")) s.chat_template = *v;
  if (auto v = http::get_string(body, "system", "system")) s.system = *v;
  if (auto v = http::get_strings(body, "license", "license")) s.licenses = *v;
  if (const auto* p = http::get_object(body, "parameters", "parameters")) {
    for (const auto& [k, v] : p->items()) {
      try {
        if (k == "stop") s.parameters.erase("stop");
        store::add_parameter(s.parameters, k, v);
      } catch (const Error& e) {
        throw http::bad_request("parameters." + k + ": " + e.what());
      }
    }
  }
  if (const auto* m = http::get_array(body, "messages", "messages")) {
    s.messages.clear();
    for (size_t i = 0; i < m->size(); ++i) {
      const std::string at = "messages[" + std::to_string(i) + "]";
      if (!(*m)[i].is_object()) throw http::bad_request(at + " must be an object");
      auto role = http::get_string((*m)[i], "role", at + ".role").value_or("");
      if (!store::is_message_role(role)) {
        throw http::bad_request(at + ".role must be system, user or assistant");
      }
      s.messages.push_back(
          {role, http::get_string((*m)[i], "content", at + ".content").value_or("")});
    }
  }
  for (const char* unsupported : {"files", "adapters"}) {
    if (const auto* v = http::field(body, unsupported); v && !v->empty()) {
      throw http::bad_request(std::string(unsupported) +
                              " (uploaded blobs) are not supported; give a path in from");
    }
  }
  if (mf.from.empty()) throw http::bad_request("from (or a modelfile with FROM) is required");
  if (req.draft_quantize && !mf.draft) throw http::bad_request("draft_quantize needs a draft");
  try {
    if (req.quantize) store::QuantType::parse(*req.quantize);
    if (req.draft_quantize) store::QuantType::parse(*req.draft_quantize);
  } catch (const Error& e) {
    throw http::bad_request(e.what());
  }
  return req;
}

json progress_line(const store::Progress& p) {
  json j = {{"status", p.status}};
  if (p.total) {
    j["total"] = p.total;
    j["completed"] = p.completed;
  }
  return j;
}

// One create running on its own MLX thread, its progress lines queued for the client.
struct CreateJob {
  Channel<json> lines;
  std::atomic<bool> cancel{false};
  Worker worker;  // last: destroyed first, waiting for the create to end
};

void forget_loaded(ServerContext& ctx, const std::string& name) {
  try {
    ctx.pool.unload(ctx.resolver.resolve(name));
  } catch (const std::exception&) {
    // nothing loaded under that name
  }
}

void create(const httplib::Request& req, httplib::Response& res, ServerContext& ctx,
            const store::Store& st) {
  auto body = http::parse_body(req.body);
  const auto request = parse_create(body);
  const bool stream = http::get_bool(body, "stream", "stream").value_or(true);
  auto job = std::make_shared<CreateJob>();
  job->worker.submit([job_ptr = job.get(), request, &st, &ctx] {
    auto& j = *job_ptr;
    try {
      store::create_model(
          st, request, [&j](const store::Progress& p) { j.lines.push(progress_line(p)); },
          &j.cancel);
      forget_loaded(ctx, request.name);
    } catch (const std::exception& e) {
      j.lines.push({{"error", e.what()}});
    }
    j.lines.close();
  });
  if (!stream) {
    json last;
    while (auto line = job->lines.pop()) last = *line;
    if (last.contains("error")) throw http::bad_request(last["error"].get<std::string>());
    http::send_json(res, last);
    return;
  }
  res.set_chunked_content_provider("application/x-ndjson", [job](size_t, httplib::DataSink& sink) {
    while (auto line = job->lines.pop()) {
      const std::string text = http::dump(*line) + "\n";
      if (!sink.write(text.data(), text.size())) {
        job->cancel.store(true);  // the client left: stop between tensors
        return false;
      }
    }
    sink.done();
    return true;
  });
}

void remove_model(const httplib::Request& req, httplib::Response& res, ServerContext& ctx,
                  const store::Store& st) {
  auto body = http::parse_body(req.body);
  const auto name = parse_name(model_field(body));
  forget_loaded(ctx, name.str());
  if (!st.remove(name)) throw http::HttpError(404, "model '" + name.str() + "' not found");
  http::send_json(res, json::object());
}

void copy_model(const httplib::Request& req, httplib::Response& res, ServerContext&,
                const store::Store& st) {
  auto body = http::parse_body(req.body);
  auto source = http::get_string(body, "source", "source");
  auto destination = http::get_string(body, "destination", "destination");
  if (!source || !destination) throw http::bad_request("source and destination are required");
  const auto from = parse_name(*source), to = parse_name(*destination);
  auto m = st.read_manifest(from);
  if (!m) throw http::HttpError(404, "model '" + from.str() + "' not found");
  st.write_manifest(to, *m);
  http::send_json(res, json::object());
}

struct StoredModel {
  store::Manifest manifest;
  json settings;
  std::string digest;  // of the manifest file
  std::string modified_at;
};

std::optional<StoredModel> stored(const store::Store& st, const std::string& name) {
  std::optional<store::ModelName> parsed;
  try {
    parsed = store::ModelName::parse(name);
  } catch (const Error&) {
    return std::nullopt;  // a path or another resolver's name
  }
  auto m = st.read_manifest(*parsed);
  if (!m) return std::nullopt;
  std::error_code ec;
  const auto file = st.manifest_file(*parsed);
  const auto mtime = fs::last_write_time(file, ec);
  const auto sys = fs::file_time_type::clock::to_sys(mtime);
  return StoredModel{*m, store::read_settings(st, *m), Sha256::of(m->to_json().dump()),
                     rfc3339(sys)};
}

json tags_entry(const store::Store& st, const ResolvedModel& r) {
  std::optional<StoredModel> s;
  try {
    s = stored(st, r.name);
  } catch (const Error&) {
    // A damaged model is still listed (so it can be deleted); /api/show says what is wrong.
    return {{"name", r.name}, {"model", r.name}, {"modified_at", rfc3339_now()},
            {"size", 0},      {"digest", ""},    {"details", json::object()}};
  }
  if (s) {
    uint64_t size = 0;
    for (const auto& l : s->manifest.files) size += l.size;
    return {{"name", r.name},
            {"model", r.name},
            {"modified_at", s->modified_at},
            {"size", size},
            {"digest", s->digest},
            {"details", s->settings.value("details", json::object())}};
  }
  std::error_code ec;
  const bool dir = fs::is_directory(r.path, ec);
  uintmax_t size = 0;
  if (dir) {
    for (const auto& f : fs::directory_iterator(r.path, ec)) {
      if (f.is_regular_file(ec)) size += f.file_size(ec);
    }
  } else {
    size = fs::file_size(r.path, ec);
  }
  return {{"name", r.name},
          {"model", r.name},
          {"modified_at", rfc3339_now()},
          {"size", size},
          {"digest", ""},
          {"details", {{"format", dir ? "safetensors" : "gguf"}, {"family", ""}}}};
}

// PARAMETERs as Ollama's show prints them: "name value" lines.
std::string parameters_text(const json& params) {
  std::string out;
  for (const auto& [k, v] : params.items()) {
    for (const auto& one : v.is_array() ? v : json::array({v})) {
      out += k + std::string(k.size() < 30 ? 30 - k.size() : 1, ' ') + one.dump() + "\n";
    }
  }
  return out;
}

// Ollama's capabilities: what an embedding model does, or generation.
json capabilities_of(const ResolvedModel& r) {
  return model::is_encoder_model(r.path) ? json{"embedding"} : json{"completion"};
}

void show(const httplib::Request& req, httplib::Response& res, ServerContext& ctx,
          const store::Store& st) {
  auto body = http::parse_body(req.body);
  const auto name = model_field(body);
  auto r = ctx.resolver.resolve(name);
  auto s = stored(st, r.name);
  if (!s) {
    const json entry = tags_entry(st, r);
    http::send_json(res, {{"modelfile", "FROM " + r.path.string() + "\n"},
                          {"parameters", ""},
                          {"template", store::own_chat_template(store::files_of_path(r.path))},
                          {"details", entry["details"]},
                          {"model_info", json::object()},
                          {"capabilities", capabilities_of(r)},
                          {"modified_at", entry["modified_at"]}});
    return;
  }
  const auto settings = store::ModelSettings::from_json(s->settings.value("settings", json()));
  std::string license;
  for (const auto& l : settings.licenses) license += (license.empty() ? "" : "\n") + l;
  std::optional<std::string> draft_from;
  if (s->settings.contains("draft") && s->settings["draft"].contains("from")) {
    draft_from = s->settings["draft"]["from"].get<std::string>();
  }
  json out = {
      {"modelfile",
       store::render_modelfile(s->settings.value("from", r.name), settings, draft_from)},
      {"parameters", parameters_text(settings.parameters)},
      {"template", settings.chat_template ? *settings.chat_template
                                          : store::own_chat_template(store::files_of_manifest(
                                                st, s->manifest, "model " + r.name))},
      {"system", settings.system.value_or("")},
      {"license", license},
      {"details", s->settings.value("details", json::object())},
      {"model_info", s->settings.value("model_info", json::object())},
      {"capabilities", capabilities_of(r)},
      {"modified_at", s->modified_at}};
  if (s->settings.contains("draft")) out["draft"] = s->settings["draft"];
  json messages = json::array();
  for (const auto& m : settings.messages)
    messages.push_back({{"role", m.role}, {"content", m.content}});
  if (!messages.empty()) out["messages"] = messages;
  http::send_json(res, out);
}

}  // namespace

void install_store_routes(httplib::Server& server, ServerContext& ctx, const store::Store& st) {
  using Fn =
      void (*)(const httplib::Request&, httplib::Response&, ServerContext&, const store::Store&);
  auto bind = [&ctx, &st](Fn f) {
    return http::guarded([&ctx, &st, f](const httplib::Request& req, httplib::Response& res) {
      f(req, res, ctx, st);
    });
  };
  server.Post("/api/create", bind(create));
  server.Delete("/api/delete", bind(remove_model));
  server.Post("/api/copy", bind(copy_model));
  server.Post("/api/show", bind(show));
  server.Get("/api/tags", bind([](const httplib::Request&, httplib::Response& res, ServerContext& c,
                                  const store::Store& s) {
               auto models = json::array();
               for (const auto& m : c.resolver.list()) models.push_back(tags_entry(s, m));
               http::send_json(res, {{"models", models}});
             }));
}

}  // namespace heron::server
