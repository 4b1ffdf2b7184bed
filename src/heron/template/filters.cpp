// jinja2's builtin filters (jinja2/filters.py) plus transformers' tojson, with the same
// argument names, defaults and results: the name table and the helpers the filter files
// (filters_text.cpp, filters_number.cpp, filters_seq.cpp) share.
#include <algorithm>
#include <unordered_map>

#include "heron/template/builtins.h"
#include "heron/template/failure.h"
#include "heron/template/filter_impl.h"
#include "heron/template/interpreter.h"
#include "heron/template/ops.h"
#include "heron/template/pystr.h"

namespace heron::chat::jinja {

namespace filters {

int64_t as_int_arg(const Value& v) {
  if (v.is_int() || v.is_bool()) return v.as_int();
  if (v.is_undefined()) undefined_error(v);
  type_error(cat("'", v.type_name(), "' object cannot be interpreted as an integer"));
}

std::optional<std::string> opt_str(const Value* v) {
  if (!v || v->is_none()) return std::nullopt;
  return to_str(*v);
}

Value generator(ValueList items) {
  return Value(std::move(items), ListKind::Generator);
}

std::vector<Value> attribute_parts(const Value& attribute) {
  std::vector<Value> parts;
  if (attribute.is_none() || attribute.is_undefined()) return parts;
  if (!attribute.is_string()) return {attribute};
  for (auto& part : py::split(attribute.str(), std::string("."), -1)) {
    if (!part.empty() && part.size() < 19 &&
        std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      parts.emplace_back(static_cast<int64_t>(std::stoll(part)));
    } else {
      parts.emplace_back(part);
    }
  }
  return parts;
}

Value lookup_path(Interpreter& in, Value item, const std::vector<Value>& parts,
                  const Value* fallback) {
  for (const auto& part : parts) {
    item = in.getitem(item, part);
    if (fallback && !fallback->is_none() && item.is_undefined()) item = *fallback;
  }
  return item;
}

Value ignore_case(const Value& v) {
  return v.is_string() ? Value(py::lower(v.str())) : v;
}

ValueList items_of(const Value& v) {
  auto items = iterate(v);
  return *items;
}

}  // namespace filters

namespace {

using namespace filters;

const std::unordered_map<std::string_view, FilterFn>& table() {
  static const std::unordered_map<std::string_view, FilterFn> filters = {
      {"abs", f_abs},
      {"attr", f_attr},
      {"batch", f_batch},
      {"capitalize", f_capitalize},
      {"center", f_center},
      {"count", f_length},
      {"d", f_default},
      {"default", f_default},
      {"dictsort", f_dictsort},
      {"e", f_escape},
      {"escape", f_escape},
      {"filesizeformat", f_filesizeformat},
      {"first", f_first},
      {"float", f_float},
      {"forceescape", f_forceescape},
      {"format", f_format},
      {"groupby", f_groupby},
      {"indent", f_indent},
      {"int", f_int},
      {"items", f_items},
      {"join", f_join},
      {"last", f_last},
      {"length", f_length},
      {"list", f_list},
      {"lower", f_lower},
      {"map", f_map},
      {"max", f_max},
      {"min", f_min},
      {"pprint", f_pprint},
      {"random", f_random},
      {"reject", f_reject},
      {"rejectattr", f_rejectattr},
      {"replace", f_replace},
      {"reverse", f_reverse},
      {"round", f_round},
      {"safe", f_safe},
      {"select", f_select},
      {"selectattr", f_selectattr},
      {"slice", f_slice},
      {"sort", f_sort},
      {"string", f_string},
      {"striptags", f_striptags},
      {"sum", f_sum},
      {"title", f_title},
      {"tojson", f_tojson},
      {"trim", f_trim},
      {"truncate", f_truncate},
      {"unique", f_unique},
      {"upper", f_upper},
      {"urlencode", f_urlencode},
      {"wordcount", f_wordcount},
      {"wordwrap", f_wordwrap},
      {"xmlattr", f_xmlattr},
  };
  return filters;
}

}  // namespace

FilterFn find_filter(std::string_view name) {
  auto it = table().find(name);
  return it == table().end() ? nullptr : it->second;
}

}  // namespace heron::chat::jinja
