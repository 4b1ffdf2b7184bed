// String filters: case, trim, replace, indent, truncate, format, striptags, urlencode, ...
#include <algorithm>
#include <cmath>

#include "heron/template/builtins.h"
#include "heron/template/failure.h"
#include "heron/template/filter_impl.h"
#include "heron/template/format.h"
#include "heron/template/interpreter.h"
#include "heron/template/ops.h"
#include "heron/template/pystr.h"

#include <unicode/uchar.h>

namespace heron::chat::jinja::filters {

Value f_upper(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader("upper", a, {});
  return Value(py::upper(to_str(v)));
}
Value f_lower(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader("lower", a, {});
  return Value(py::lower(to_str(v)));
}
Value f_capitalize(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader("capitalize", a, {});
  return Value(py::capitalize(to_str(v)));
}

// Words start after runs of "-", whitespace, "(", "{", "[", "<".
Value f_title(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader("title", a, {});
  auto cps = py::decode(to_str(v));
  auto delim = [](char32_t c) {
    return c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || py::isspace(c);
  };
  std::string out;
  size_t i = 0;
  while (i < cps.size()) {
    const bool d = delim(cps[i]);
    size_t j = i;
    while (j < cps.size() && delim(cps[j]) == d) ++j;
    std::u32string_view seg(cps.data() + i, j - i);
    out += py::upper(py::encode(seg.substr(0, 1)));
    out += py::lower(py::encode(seg.substr(1)));
    i = j;
  }
  return Value(std::move(out));
}

Value f_trim(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader r("trim", a, {"chars"});
  if (!v.is_string()) return Value(py::strip(to_str(v), opt_str(r.get(0)), py::Side::Both));
  auto kept = py::strip_view(v.str(), opt_str(r.get(0)), py::Side::Both);
  return kept.size() == v.str().size() ? v : Value(kept);  // unchanged: no copy
}

Value f_replace(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader r("replace", a, {"old", "new", "count"});
  if (!r.get(0) || !r.get(1)) type_error("do_replace() missing required arguments");
  const Value* count = r.get(2);
  long n = count && !count->is_none() ? static_cast<long>(as_int_arg(*count)) : -1;
  return Value(py::replace(to_str(v), to_str(*r.get(0)), to_str(*r.get(1)), n));
}

Value f_string(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader("string", a, {});
  return v.is_string() ? v : Value(to_str(v));
}

Value f_safe(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader("safe", a, {});
  return v.is_markup() ? v : Value::markup(to_str(v));
}

static std::string html_escape(const std::string& s) {
  std::string out;
  append_html_escaped(out, s);
  return out;
}

Value f_escape(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader("escape", a, {});
  return v.is_markup() ? v : Value::markup(html_escape(to_str(v)));
}

// Escapes even a Markup (str() of it first), as jinja2's forceescape does.
Value f_forceescape(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader("forceescape", a, {});
  return Value::markup(html_escape(to_str(v)));
}

Value f_center(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader r("center", a, {"width"});
  const int64_t width = r.get(0) ? as_int_arg(*r.get(0)) : 80;
  check_build(static_cast<size_t>(std::max<int64_t>(width, 0)));
  return Value(py::center(to_str(v), static_cast<long>(width), " "));
}

Value f_indent(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader r("indent", a, {"width", "first", "blank"});
  std::string indention;
  if (r.get(0) && r.get(0)->is_string()) {
    indention = r.get(0)->str();
  } else {
    const int64_t width = r.get(0) ? as_int_arg(*r.get(0)) : 4;
    check_build(static_cast<size_t>(std::max<int64_t>(width, 0)));
    indention.assign(static_cast<size_t>(std::max<int64_t>(width, 0)), ' ');
  }
  const bool first = r.get_or(1, kFalse).truthy(), blank = r.get_or(2, kFalse).truthy();
  if (!v.is_string()) {  // jinja2 does `s += "\n"`, which only a str survives
    if (v.is_undefined()) undefined_error(v);
    type_error(cat("unsupported operand type(s) for +=: '", v.type_name(), "' and 'str'"));
  }
  auto lines = py::splitlines(v.str() + "\n", false);
  std::string rv;
  if (blank) {
    for (size_t i = 0; i < lines.size(); ++i) {
      if (i) rv += "\n" + indention;
      rv += lines[i];
    }
  } else {
    rv = lines.empty() ? "" : lines[0];
    for (size_t i = 1; i < lines.size(); ++i) {
      rv += "\n";
      if (!lines[i].empty()) rv += indention;
      rv += lines[i];
    }
  }
  if (first) rv = indention + rv;
  return Value(std::move(rv));
}

Value f_truncate(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader r("truncate", a, {"length", "killwords", "end", "leeway"});
  const int64_t length = r.get(0) ? as_int_arg(*r.get(0)) : 255;
  const bool killwords = r.get_or(1, kFalse).truthy();
  const std::string end = r.get(2) ? to_str(*r.get(2)) : "...";
  const int64_t leeway = r.get(3) && !r.get(3)->is_none() ? as_int_arg(*r.get(3)) : 5;
  if (!v.is_string()) {  // Python measures len(s) first; only a short sequence survives
    if (static_cast<int64_t>(jinja::length(v)) <= length + leeway) return v;
    type_error(cat("'", v.type_name(), "' object has no attribute 'rsplit'"));
  }
  auto cps = py::decode(v.str());
  const auto end_len = static_cast<int64_t>(py::length(end));
  if (length < end_len)
    fail("AssertionError",
         "expected length >= " + std::to_string(end_len) + ", got " + std::to_string(length));
  if (static_cast<int64_t>(cps.size()) <= length + leeway) return Value(py::encode(cps));
  std::string head =
      py::encode(std::u32string_view(cps).substr(0, static_cast<size_t>(length - end_len)));
  if (killwords) return Value(head + end);
  auto parts = py::rsplit(head, std::string(" "), 1);
  return Value(parts[0] + end);
}

Value f_wordcount(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader("wordcount", a, {});
  int64_t n = 0;
  bool in_word = false;
  for (char32_t c : py::decode(to_str(v))) {
    const bool w = c == '_' || u_isalnum(static_cast<UChar32>(c));
    if (w && !in_word) ++n;
    in_word = w;
  }
  return Value(n);
}

Value f_format(Interpreter&, const Value& v, CallArgs& a) {
  if (!a.positional.empty() && !a.kwargs.empty()) {
    fail("FilterArgumentError", "can't handle positional and keyword arguments at the same time");
  }
  if (!a.kwargs.empty()) {
    Dict d;
    for (auto& [k, val] : a.kwargs) d.set(Value(k), val);
    return Value(printf_format(to_str(v), Value(std::move(d))));
  }
  return Value(printf_format(to_str(v), Value(a.positional, ListKind::Tuple)));
}

Value f_striptags(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader("striptags", a, {});
  std::string s = to_str(v), out;
  for (size_t i = 0; i < s.size();) {
    if (s.compare(i, 4, "<!--") == 0) {
      size_t end = s.find("-->", i + 4);
      if (end == std::string::npos) {
        out.append(s, i, std::string::npos);
        break;
      }
      i = end + 3;
    } else if (s[i] == '<') {
      size_t end = s.find('>', i + 1);
      if (end == std::string::npos) {
        out.append(s, i, std::string::npos);
        break;
      }
      i = end + 1;
    } else {
      out.push_back(s[i++]);
    }
  }
  std::string joined;
  for (const auto& w : py::split(out, std::nullopt, -1)) joined += (joined.empty() ? "" : " ") + w;
  static const std::pair<const char*, const char*> entities[] = {{"&lt;", "<"},    {"&gt;", ">"},
                                                                 {"&quot;", "\""}, {"&#34;", "\""},
                                                                 {"&#39;", "'"},   {"&amp;", "&"}};
  for (const auto& [from, to] : entities) joined = py::replace(joined, from, to, -1);
  return Value(std::move(joined));
}

Value f_urlencode(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader("urlencode", a, {});
  // jinja2's url_quote: "/" stays in a plain string; a query string turns "%20" into "+".
  auto quote = [](const std::string& s, bool for_qs) {
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : s) {
      if (std::isalnum(c) || c == '_' || c == '.' || c == '-' || c == '~' ||
          (!for_qs && c == '/')) {
        out.push_back(static_cast<char>(c));
      } else if (for_qs && c == ' ') {
        out.push_back('+');
      } else {
        out.push_back('%');
        out.push_back(hex[c >> 4]);
        out.push_back(hex[c & 15]);
      }
    }
    return out;
  };
  const bool iterable = v.is_list() || v.is_dict() || v.is_undefined();
  if (v.is_string() || !iterable) return Value(quote(to_str(v), false));
  std::string out;
  const bool dict = v.is_dict();
  ValueList pairs;
  if (dict) {
    for (const auto& [k, val] : v.dict().items())
      pairs.push_back(Value(ValueList{k, val}, ListKind::Tuple));
  } else {
    pairs = items_of(v);
  }
  for (const auto& p : pairs) {
    auto kv = iterate(p);
    if (kv->size() != 2) {
      fail("ValueError", kv->size() > 2 ? "too many values to unpack (expected 2)"
                                        : cat("not enough values to unpack (expected 2, got ",
                                              std::to_string(kv->size()), ")"));
    }
    if (!out.empty()) out += "&";
    out += quote(to_str((*kv)[0]), true) + "=" + quote(to_str((*kv)[1]), true);
  }
  return Value(std::move(out));
}

Value f_filesizeformat(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader r("filesizeformat", a, {"binary"});
  const bool binary = r.get_or(0, kFalse).truthy();
  double bytes = v.is_string() ? std::strtod(v.str().c_str(), nullptr) : v.as_float();
  const double base = binary ? 1024 : 1000;
  static const char* dec[] = {"kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"};
  static const char* bin[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"};
  if (bytes == 1) return Value(std::string("1 Byte"));
  if (bytes < base) {  // f"{int(bytes)} Bytes", however negative
    const double whole = std::trunc(require_int_convertible(bytes));
    return Value(cat(whole < 0 ? "-" : "", py::integral_digits(whole), " Bytes"));
  }
  double unit = base;
  for (int i = 0; i < 8; ++i) {
    unit = std::pow(base, i + 2);
    if (bytes < unit || i == 7) {
      // f"{x:.1f} {prefix}": Python's float format ("nan", never printf's "-nan").
      return Value(
          cat(format_spec(Value(base * bytes / unit), ".1f"), " ", binary ? bin[i] : dec[i]));
    }
  }
  return Value(std::string());
}

Value f_wordwrap(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader r("wordwrap", a, {"width", "break_long_words", "wrapstring", "break_on_hyphens"});
  const int64_t width = r.get(0) ? as_int_arg(*r.get(0)) : 79;
  const std::string wrap = r.get(2) && !r.get(2)->is_none() ? to_str(*r.get(2)) : "\n";
  std::string out;
  bool first_para = true;
  for (const auto& para : py::splitlines(to_str(v), false)) {
    if (!first_para) out += wrap;
    first_para = false;
    std::string line;
    bool first_line = true;
    for (const auto& word : py::split(para, std::nullopt, -1)) {
      if (!line.empty() && static_cast<int64_t>(py::length(line) + 1 + py::length(word)) > width) {
        out += (first_line ? "" : wrap) + line;
        first_line = false;
        line.clear();
      }
      line += (line.empty() ? "" : " ") + word;
    }
    if (!line.empty()) out += (first_line ? "" : wrap) + line;
  }
  return Value(std::move(out));
}

Value f_xmlattr(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader r("xmlattr", a, {"autospace"});
  if (!v.is_dict()) type_error("xmlattr requires a mapping");
  std::string out;
  for (const auto& [k, val] : v.dict().items()) {
    if (val.is_none() || val.is_undefined()) continue;
    out +=
        cat(out.empty() ? "" : " ", html_escape(to_str(k)), "=\"", html_escape(to_str(val)), "\"");
  }
  if (!out.empty() && r.get_or(0, Value(true)).truthy()) out = " " + out;
  return Value(std::move(out));
}

Value f_pprint(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader("pprint", a, {});
  return Value(repr(v));
}

}  // namespace heron::chat::jinja::filters
