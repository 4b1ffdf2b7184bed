// json.dumps as transformers' tojson calls it: ensure_ascii off by default, Python's
// separators (", " and ": ", or "," with an indent), float repr, insertion order.
#include "heron/template/json_dump.h"

#include <algorithm>
#include <cmath>

#include "heron/template/failure.h"
#include "heron/template/ops.h"
#include "heron/template/pystr.h"

namespace heron::chat::jinja {

namespace {

void json_string(std::string& out, std::string_view s, bool ensure_ascii) {
  static const char* hex = "0123456789abcdef";
  auto u_escape = [&](uint32_t unit) {
    out += "\\u";
    for (int k = 3; k >= 0; --k) out.push_back(hex[(unit >> (4 * k)) & 0xF]);
  };
  out.push_back('"');
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          u_escape(c);
        } else if (c < 0x80 || !ensure_ascii) {
          out.push_back(static_cast<char>(c));
        } else {
          size_t n = 1;
          while (i + n < s.size() && (static_cast<unsigned char>(s[i + n]) & 0xC0) == 0x80) ++n;
          const char32_t cp = py::decode(s.substr(i, n))[0];
          i += n - 1;
          if (cp < 0x10000) {
            u_escape(cp);
          } else {
            u_escape(0xD800 + ((cp - 0x10000) >> 10));
            u_escape(0xDC00 + ((cp - 0x10000) & 0x3FF));
          }
        }
    }
  }
  out.push_back('"');
}

std::string json_float(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d < 0 ? "-Infinity" : "Infinity";
  return py::float_repr(d);
}

struct JsonWriter {
  const JsonOptions& options;
  std::string item_sep, key_sep;
  std::string out;
  int depth = 0;

  void newline(int level) {
    out.push_back('\n');
    for (int k = 0; k < level; ++k) out += *options.indent;
  }

  void key(const Value& k) {
    switch (k.kind()) {
      case Kind::String:
        json_string(out, k.str(), options.ensure_ascii);
        return;
      case Kind::Bool:
        out += k.as_bool() ? "\"true\"" : "\"false\"";
        return;
      case Kind::Int:
        out += '"' + std::to_string(k.as_int()) + '"';
        return;
      case Kind::Float:
        out += '"' + json_float(k.as_float()) + '"';
        return;
      case Kind::None:
        out += "\"null\"";
        return;
      default:
        type_error("keys must be str, int, float, bool or None, not " + std::string(k.type_name()));
    }
  }

  void write(const Value& v) {
    if (++depth > 500) fail("RecursionError", "maximum recursion depth exceeded in json.dumps");
    switch (v.kind()) {
      case Kind::None:
        out += "null";
        break;
      case Kind::Bool:
        out += v.as_bool() ? "true" : "false";
        break;
      case Kind::Int:
        out += std::to_string(v.as_int());
        break;
      case Kind::Float:
        out += json_float(v.as_float());
        break;
      case Kind::String:
        json_string(out, v.str(), options.ensure_ascii);
        break;
      case Kind::List: {
        if (!v.is_sequence()) {
          type_error("Object of type " + std::string(v.type_name()) + " is not JSON serializable");
        }
        const auto& items = v.list();
        if (items.empty()) {
          out += "[]";
          break;
        }
        out.push_back('[');
        for (size_t i = 0; i < items.size(); ++i) {
          if (i) out += item_sep;
          if (options.indent) newline(depth);
          write(items[i]);
        }
        if (options.indent) newline(depth - 1);
        out.push_back(']');
        break;
      }
      case Kind::Dict: {
        const auto& dict = v.dict();
        if (dict.empty()) {
          out += "{}";
          break;
        }
        std::vector<const Dict::Item*> items;
        for (const auto& item : dict.items()) items.push_back(&item);
        if (options.sort_keys) {
          std::stable_sort(items.begin(), items.end(),
                           [](const auto* a, const auto* b) { return less(a->first, b->first); });
        }
        out.push_back('{');
        for (size_t i = 0; i < items.size(); ++i) {
          if (i) out += item_sep;
          if (options.indent) newline(depth);
          key(items[i]->first);
          out += key_sep;
          write(items[i]->second);
        }
        if (options.indent) newline(depth - 1);
        out.push_back('}');
        break;
      }
      default:
        type_error("Object of type " + std::string(v.type_name()) + " is not JSON serializable");
    }
    --depth;
  }
};

}  // namespace

std::string json_dumps(const Value& v, const JsonOptions& options) {
  JsonWriter w{options, options.indent ? "," : ", ", ": ", {}, 0};
  if (options.separators) {
    w.item_sep = options.separators->first;
    w.key_sep = options.separators->second;
  }
  w.write(v);
  return std::move(w.out);
}

}  // namespace heron::chat::jinja
