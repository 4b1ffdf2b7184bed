#include "heron/template/template.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "heron/core/error.h"
#include "heron/template/builtins.h"
#include "heron/template/failure.h"
#include "heron/template/interpreter.h"
#include "heron/template/parser.h"
#include "heron/template/same_text.h"

namespace heron::chat {

namespace {

using jinja::JsonAccess;
using jinja::Value;

// The Dicts a render makes for context JSON objects, in blocks whose addresses stay put
// (each block is reserved to its final size before it is filled).
using DictPool = std::vector<std::vector<jinja::Dict>>;

// Context JSON is read in place: strings are borrowed, objects become Dicts that look
// keys up in the JSON (kept in a per-render pool), arrays become lists of those.
template <class Json>
struct JsonReader {
  static Value convert(const JsonAccess& access, const Json& j) {
    switch (j.type()) {
      case nlohmann::json::value_t::null:
        return Value::none();
      case nlohmann::json::value_t::boolean:
        return Value(j.template get<bool>());
      case nlohmann::json::value_t::number_integer:
        return Value(j.template get<int64_t>());
      case nlohmann::json::value_t::number_unsigned: {
        auto u = j.template get<uint64_t>();
        if (u <= static_cast<uint64_t>(INT64_MAX)) return Value(static_cast<int64_t>(u));
        return Value(static_cast<double>(u));
      }
      case nlohmann::json::value_t::number_float:
        return Value(j.template get<double>());
      case nlohmann::json::value_t::string:
        return Value::borrowed(j.template get_ref<const std::string&>());
      case nlohmann::json::value_t::array: {
        // The objects of an array (the messages) share one block of Dicts, made at the
        // first object with room for every item.
        std::vector<jinja::Dict>* dicts = nullptr;
        jinja::ValueList items;
        items.reserve(j.size());
        for (const auto& item : j) {
          if (item.is_object()) {
            if (!dicts) dicts = &new_dicts(access, j.size());
            items.push_back(Value::borrowed(dicts->emplace_back(&access, &item)));
          } else {
            items.push_back(convert(access, item));
          }
        }
        return Value(std::move(items));
      }
      case nlohmann::json::value_t::object: {
        return Value::borrowed(new_dicts(access, 1).emplace_back(&access, &j));
      }
      default:
        throw Error("chat template context: unsupported JSON value (binary data)");
    }
  }

  // An empty block with room for n Dicts.
  static std::vector<jinja::Dict>& new_dicts(const JsonAccess& access, size_t n) {
    auto& block = static_cast<DictPool*>(access.pool)->emplace_back();
    block.reserve(n);
    return block;
  }

  static size_t size(const void* node) { return static_cast<const Json*>(node)->size(); }

  // The member `key` of an object node, or null.
  static const Json* member(const void* node, std::string_view key) {
    const auto& object =
        static_cast<const Json*>(node)->template get_ref<const typename Json::object_t&>();
    for (const auto& [k, v] : object) {  // chat messages have a handful of keys
      if (jinja::same_text(k, key)) return &v;
    }
    return nullptr;
  }

  static bool find(const JsonAccess& access, const void* node, std::string_view key, Value& out) {
    const Json* v = member(node, key);
    if (!v) return false;
    // Strings (roles, contents) are the usual hit: borrow them without the switch.
    out = v->is_string() ? Value::borrowed(v->template get_ref<const std::string&>())
                         : convert(access, *v);
    return true;
  }

  static const std::string* find_string(const void* node, std::string_view key) {
    const Json* v = member(node, key);
    return v && v->is_string() ? &v->template get_ref<const std::string&>() : nullptr;
  }

  static void items(const JsonAccess& access, const void* node,
                    std::vector<jinja::Dict::Item>& out) {
    const auto& j = *static_cast<const Json*>(node);
    out.reserve(j.size());
    for (auto it = j.begin(); it != j.end(); ++it) {
      out.emplace_back(Value::borrowed(it.key()), convert(access, it.value()));
    }
  }
};

template <class Json>
std::string render_with(const jinja::Program& program, const Json& context,
                        const RenderOptions& options) {
  if (!context.is_object()) throw Error("chat template context must be a JSON object");
  // Declared before the interpreter: values borrow from the pool until the render ends.
  DictPool pool;
  const jinja::JsonAccess access{&JsonReader<Json>::size, &JsonReader<Json>::find,
                                 &JsonReader<Json>::find_string, &JsonReader<Json>::items, &pool};
  std::vector<Value> globals;
  globals.reserve(program.names.size());
  for (const auto& name : program.names) {
    auto it = context.find(name);
    Value v;
    if (it != context.end()) {
      v = JsonReader<Json>::convert(access, *it);
    } else if (!jinja::find_global(name, v)) {
      v = Value::undefined_named(name);
    }
    globals.push_back(std::move(v));
  }
  jinja::RenderSettings settings;
  settings.limits.max_output_bytes = options.max_output_bytes;
  settings.limits.max_steps = options.max_steps;
  settings.limits.max_recursion_depth = options.max_recursion_depth;
  settings.now = options.now;
  jinja::Interpreter interp(program, std::move(globals), settings);
  try {
    return interp.render();
  } catch (const Error&) {
    throw;
  } catch (const jinja::Failure& f) {  // raised outside any node (should not happen)
    throw Error("chat template error: " + f.type + ": " + f.message);
  } catch (const std::exception& e) {  // e.g. an allocation failure: still the user's input
    throw Error(std::string("chat template error: ") + e.what());
  }
}

}  // namespace

Template Template::parse(const std::string& source) {
  Template t;
  t.program_ = std::make_shared<const jinja::Program>(jinja::parse(source));
  return t;
}

std::string Template::render(const nlohmann::ordered_json& context,
                             const RenderOptions& options) const {
  if (!program_) throw Error("chat template: render() called on a template that was never parsed");
  return render_with(*program_, context, options);
}

std::string Template::render(const nlohmann::json& context, const RenderOptions& options) const {
  if (!program_) throw Error("chat template: render() called on a template that was never parsed");
  return render_with(*program_, context, options);
}

}  // namespace heron::chat
