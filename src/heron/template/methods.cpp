// Methods of str, list and dict values that templates call (message.content.strip(),
// messages.get(...)). Mutating methods exist but are unsafe: the immutable sandbox turns
// them into undefined values that fail when called, as jinja2's does.
#include <algorithm>
#include <unordered_set>

#include "heron/template/builtins.h"
#include "heron/template/failure.h"
#include "heron/template/format.h"
#include "heron/template/interpreter.h"
#include "heron/template/ops.h"
#include "heron/template/pystr.h"

namespace heron::chat::jinja {

namespace {

const std::unordered_set<std::string_view> kStrMethods = {
    "capitalize",   "casefold",    "center",    "count",      "encode",       "endswith",
    "expandtabs",   "find",        "format",    "format_map", "index",        "isalnum",
    "isalpha",      "isascii",     "isdecimal", "isdigit",    "isidentifier", "islower",
    "isnumeric",    "isprintable", "isspace",   "istitle",    "isupper",      "join",
    "ljust",        "lower",       "lstrip",    "maketrans",  "partition",    "removeprefix",
    "removesuffix", "replace",     "rfind",     "rindex",     "rjust",        "rpartition",
    "rsplit",       "rstrip",      "split",     "splitlines", "startswith",   "strip",
    "swapcase",     "title",       "translate", "upper",      "zfill"};
const std::unordered_set<std::string_view> kDictMethods = {"copy",  "fromkeys", "get",
                                                           "items", "keys",     "values"};
const std::unordered_set<std::string_view> kDictUnsafe = {"clear", "pop", "popitem", "setdefault",
                                                          "update"};
const std::unordered_set<std::string_view> kListMethods = {"copy", "count", "index"};
const std::unordered_set<std::string_view> kListUnsafe = {"append", "clear",  "extend",  "insert",
                                                          "pop",    "remove", "reverse", "sort"};

const Value kNone = Value::none();

std::optional<std::string> opt_chars(const Value* v, const char* method) {
  if (!v || v->is_none()) return std::nullopt;
  if (!v->is_string()) {
    type_error(std::string(method) + " arg must be None or str");
  }
  return v->str();
}

long opt_long(const Value* v, long fallback) {
  if (!v || v->is_none()) return fallback;
  if (v->is_int() || v->is_bool()) return static_cast<long>(v->as_int());
  type_error(cat("'", v->type_name(), "' object cannot be interpreted as an integer"));
}

const std::string& str_arg(const Value* v, const char* what) {
  if (!v) type_error(std::string(what) + "() takes at least 1 argument (0 given)");
  if (!v->is_string()) {
    if (v->is_undefined()) undefined_error(*v);
    type_error(std::string("must be str, not ") + std::string(v->type_name()));
  }
  return v->str();
}

// s[start:end] in code points, for find/count/startswith with bounds.
std::string bounded(const std::string& s, const Value* start, const Value* end, long& offset) {
  offset = 0;
  if ((!start || start->is_none()) && (!end || end->is_none())) return s;
  Value sliced = slice(Value(s), start ? *start : kNone, end ? *end : kNone, kNone);
  const long n = static_cast<long>(py::length(s));
  long b = opt_long(start, 0);
  if (b < 0) b = std::max(0L, b + n);
  offset = std::min(b, n);
  return sliced.str();
}

bool affix_match(const std::string& s, const Value& affix, bool prefix, const char* method) {
  auto one = [&](const Value& v) {
    if (!v.is_string()) {
      type_error(std::string(method) + " first arg must be str or a tuple of str, not " +
                 std::string(v.type_name()));
    }
    const std::string& a = v.str();
    if (a.size() > s.size()) return false;
    return prefix ? s.compare(0, a.size(), a) == 0
                  : s.compare(s.size() - a.size(), a.size(), a) == 0;
  };
  if (affix.is_list() && affix.list_kind() == ListKind::Tuple) {
    return std::any_of(affix.list().begin(), affix.list().end(), one);
  }
  return one(affix);
}

Value str_list(std::vector<std::string> parts) {
  ValueList out;
  out.reserve(parts.size());
  for (auto& p : parts) out.emplace_back(std::move(p));
  return Value(std::move(out));
}

Value call_str(Interpreter& in, const std::string& s, std::string_view name, CallArgs& a) {
  if (name == "format") return Value(str_format(s, a.positional, a.kwargs));
  if (name == "format_map") {
    if (a.positional.size() != 1 || !a.positional[0].is_dict()) {
      type_error("format_map() takes exactly one argument");
    }
    std::vector<std::pair<std::string, Value>> kwargs;
    for (const auto& [k, v] : a.positional[0].dict().items()) kwargs.emplace_back(to_str(k), v);
    return Value(str_format(s, {}, kwargs));
  }
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    ArgReader r("strip", a, {"chars"});
    const auto side = name == "strip"    ? py::Side::Both
                      : name == "lstrip" ? py::Side::Left
                                         : py::Side::Right;
    return Value(py::strip_view(s, opt_chars(r.get(0), "strip"), side));
  }
  if (name == "split" || name == "rsplit") {
    ArgReader r("split", a, {"sep", "maxsplit"});
    auto sep = opt_chars(r.get(0), "split");
    if (sep && sep->empty()) fail("ValueError", "empty separator");
    const long maxsplit = opt_long(r.get(1), -1);
    return str_list(name == "split" ? py::split(s, sep, maxsplit) : py::rsplit(s, sep, maxsplit));
  }
  if (name == "splitlines") {
    ArgReader r("splitlines", a, {"keepends"});
    return str_list(py::splitlines(s, r.get(0) && r.get(0)->truthy()));
  }
  if (name == "startswith" || name == "endswith") {
    ArgReader r(std::string(name).c_str(), a, {"prefix", "start", "end"});
    if (!r.get(0)) type_error(std::string(name) + "() takes at least 1 argument (0 given)");
    long offset;
    const std::string part = bounded(s, r.get(1), r.get(2), offset);
    return Value(affix_match(part, *r.get(0), name == "startswith", std::string(name).c_str()));
  }
  if (name == "replace") {
    ArgReader r("replace", a, {"old", "new", "count"});
    return Value(py::replace(s, str_arg(r.get(0), "replace"), str_arg(r.get(1), "replace"),
                             opt_long(r.get(2), -1)));
  }
  if (name == "find" || name == "rfind" || name == "index" || name == "rindex") {
    ArgReader r("find", a, {"sub", "start", "end"});
    long offset;
    const std::string part = bounded(s, r.get(1), r.get(2), offset);
    long at = py::find(part, str_arg(r.get(0), "find"), name[0] == 'r');
    if (at < 0 && (name == "index" || name == "rindex")) fail("ValueError", "substring not found");
    return Value(static_cast<int64_t>(at < 0 ? -1 : at + offset));
  }
  if (name == "count") {
    ArgReader r("count", a, {"sub", "start", "end"});
    long offset;
    return Value(static_cast<int64_t>(
        py::count(bounded(s, r.get(1), r.get(2), offset), str_arg(r.get(0), "count"))));
  }
  if (name == "join") {
    ArgReader r("join", a, {"iterable"});
    if (!r.get(0)) type_error("join() takes exactly one argument (0 given)");
    std::string out;
    size_t i = 0;
    for (auto held = iterate(*r.get(0)); const auto& item : *held) {
      if (!item.is_string()) {
        type_error("sequence item " + std::to_string(i) + ": expected str instance, " +
                   std::string(item.type_name()) + " found");
      }
      if (i++) out += s;
      out += item.str();
      in.check_size(out.size());
    }
    return Value(std::move(out));
  }
  if (name == "center" || name == "ljust" || name == "rjust") {
    ArgReader r("center", a, {"width", "fillchar"});
    const long width = opt_long(r.get(0), 0);
    const std::string fill = r.get(1) ? str_arg(r.get(1), "center") : " ";
    if (py::length(fill) != 1) type_error("The fill character must be exactly one character long");
    in.check_size(static_cast<size_t>(std::max(width, 0L)) * fill.size());
    return Value(name == "center"  ? py::center(s, width, fill)
                 : name == "ljust" ? py::ljust(s, width, fill)
                                   : py::rjust(s, width, fill));
  }
  if (name == "zfill") {
    ArgReader r("zfill", a, {"width"});
    const long width = opt_long(r.get(0), 0);
    in.check_size(static_cast<size_t>(std::max(width, 0L)));
    return Value(py::zfill(s, width));
  }
  if (name == "partition" || name == "rpartition") {
    ArgReader r("partition", a, {"sep"});
    const std::string& sep = str_arg(r.get(0), "partition");
    if (sep.empty()) fail("ValueError", "empty separator");
    size_t at = name == "partition" ? s.find(sep) : s.rfind(sep);
    if (at == std::string::npos) {
      return name == "partition"
                 ? Value(ValueList{Value(s), Value(""), Value("")}, ListKind::Tuple)
                 : Value(ValueList{Value(""), Value(""), Value(s)}, ListKind::Tuple);
    }
    return Value(ValueList{Value(s.substr(0, at)), Value(sep), Value(s.substr(at + sep.size()))},
                 ListKind::Tuple);
  }
  if (name == "removeprefix" || name == "removesuffix") {
    ArgReader r("removeprefix", a, {"affix"});
    const std::string& affix = str_arg(r.get(0), std::string(name).c_str());
    if (name == "removeprefix" && s.compare(0, affix.size(), affix) == 0)
      return Value(s.substr(affix.size()));
    if (name == "removesuffix" && !affix.empty() && s.size() >= affix.size() &&
        s.compare(s.size() - affix.size(), affix.size(), affix) == 0) {
      return Value(s.substr(0, s.size() - affix.size()));
    }
    return Value(s);
  }
  if (name == "expandtabs") {
    ArgReader r("expandtabs", a, {"tabsize"});
    const long tab = opt_long(r.get(0), 8);
    std::string out;
    long col = 0;
    for (char32_t c : py::decode(s)) {
      if (c == '\t') {
        if (tab > 0) {
          const long n = tab - col % tab;
          out.append(static_cast<size_t>(n), ' ');
          col += n;
        }
      } else {
        py::append_utf8(out, c);
        col = c == '\n' || c == '\r' ? 0 : col + 1;
      }
    }
    return Value(std::move(out));
  }
  ArgReader(std::string(name).c_str(), a, {});
  if (name == "upper") return Value(py::upper(s));
  if (name == "lower" || name == "casefold") return Value(py::lower(s));
  if (name == "title") return Value(py::title(s));
  if (name == "capitalize") return Value(py::capitalize(s));
  if (name == "swapcase") return Value(py::swapcase(s));
  if (name == "islower") return Value(py::islower(s));
  if (name == "isupper") return Value(py::isupper(s));
  if (name == "isalpha") return Value(py::isalpha(s));
  if (name == "isdigit" || name == "isdecimal" || name == "isnumeric") return Value(py::isdigit(s));
  if (name == "isalnum") return Value(py::isalnum(s));
  if (name == "isspace") return Value(py::isspace(s));
  if (name == "isascii") return Value(py::is_ascii(s));
  if (name == "istitle") return Value(!s.empty() && py::title(s) == s && py::lower(s) != s);
  if (name == "isidentifier") {
    bool ok = !s.empty() && !(s[0] >= '0' && s[0] <= '9');
    for (char c : s)
      ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
                  static_cast<unsigned char>(c) >= 0x80);
    return Value(ok);
  }
  if (name == "isprintable") {
    for (char32_t c : py::decode(s)) {
      if (!py::isprintable(c)) return Value(false);
    }
    return Value(true);
  }
  fail("TypeError", "str." + std::string(name) + "() is not supported in chat templates");
}

Value dict_items(const Value& self) {
  ValueList out;
  out.reserve(self.dict().size());
  for (const auto& [k, v] : self.dict().items())
    out.push_back(Value(ValueList{k, v}, ListKind::Tuple));
  return Value(std::move(out), ListKind::DictItems);
}

Value call_dict(const Value& self, std::string_view name, CallArgs& a) {
  if (name == "get") {
    ArgReader r("get", a, {"key", "default"});
    if (!r.get(0)) type_error("get expected at least 1 argument, got 0");
    Value found;
    return self.dict().find(*r.get(0), found) ? found : r.get_or(1, kNone);
  }
  ArgReader(std::string(name).c_str(), a, {});
  if (name == "items") return dict_items(self);
  if (name == "copy") return self;
  ValueList out;
  out.reserve(self.dict().size());
  for (const auto& [k, v] : self.dict().items()) out.push_back(name == "keys" ? k : v);
  if (name == "keys") return Value(std::move(out), ListKind::DictKeys);
  if (name == "values") return Value(std::move(out), ListKind::DictValues);
  fail("TypeError", "dict." + std::string(name) + "() is not supported in chat templates");
}

Value call_list(const Value& self, std::string_view name, CallArgs& a) {
  if (name == "copy") {
    ArgReader("copy", a, {});
    return self;
  }
  ArgReader r(std::string(name).c_str(), a, {"value"});
  if (!r.get(0)) type_error(std::string(name) + "() takes exactly one argument (0 given)");
  const auto& items = self.list();
  if (name == "count") {
    return Value(static_cast<int64_t>(std::count_if(
        items.begin(), items.end(), [&](const Value& v) { return equals(v, *r.get(0)); })));
  }
  for (size_t i = 0; i < items.size(); ++i) {
    if (equals(items[i], *r.get(0))) return Value(static_cast<int64_t>(i));
  }
  fail("ValueError", repr(*r.get(0)) + " is not in list");
}

}  // namespace

bool has_method(const Value& self, std::string_view name, bool& unsafe) {
  unsafe = false;
  switch (self.kind()) {
    case Kind::String:
      return kStrMethods.count(name) != 0;
    case Kind::Dict:
      if (kDictUnsafe.count(name)) return unsafe = true;
      return kDictMethods.count(name) != 0;
    case Kind::List:
      if (!self.is_sequence()) return false;
      if (self.list_kind() == ListKind::List && kListUnsafe.count(name)) return unsafe = true;
      return kListMethods.count(name) != 0 &&
             (self.list_kind() == ListKind::List || name != "copy");
    default:
      return false;
  }
}

Value call_method(Interpreter& interp, const Value& self, std::string_view name, CallArgs& args) {
  switch (self.kind()) {
    case Kind::String:
      return call_str(interp, self.str(), name, args);
    case Kind::Dict:
      return call_dict(self, name, args);
    case Kind::List:
      return call_list(self, name, args);
    default:
      type_error("'" + std::string(self.type_name()) + "' object has no attribute '" +
                 std::string(name) + "'");
  }
}

}  // namespace heron::chat::jinja
