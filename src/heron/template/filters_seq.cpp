// Sequence filters: length, first/last, join, sort, dictsort, unique, map/select/reject,
// groupby, batch/slice, sum/min/max, attr, tojson. Filters that are generators in jinja2
// return ListKind::Generator values.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include <random>
#include "heron/template/builtins.h"
#include "heron/template/failure.h"
#include "heron/template/filter_impl.h"
#include "heron/template/interpreter.h"
#include "heron/template/ops.h"
#include "heron/template/pystr.h"

#include "heron/template/json_dump.h"

namespace heron::chat::jinja::filters {

Value f_length(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader("length", a, {});
  return Value(static_cast<int64_t>(length(v)));
}

Value f_default(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader r("default", a, {"default_value", "boolean"});
  const bool boolean = r.get_or(1, kFalse).truthy();
  if (v.is_undefined() || (boolean && !v.truthy())) return r.get_or(0, kEmpty);
  return v;
}

Value f_first(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader("first", a, {});
  auto items = iterate(v);
  if (items->empty()) return Value::undefined_hint("No first item, sequence was empty.");
  return items->front();
}

Value f_last(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader("last", a, {});
  if (v.is_list() && v.list_kind() == ListKind::Generator) {
    type_error("'generator' object is not reversible");
  }
  if (!(v.is_list() || v.is_string() || v.is_dict() || v.is_undefined())) {
    type_error("'" + std::string(v.type_name()) + "' object is not reversible");
  }
  auto items = iterate(v);
  if (items->empty()) return Value::undefined_hint("No last item, sequence was empty.");
  return items->back();
}

Value f_list(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader("list", a, {});
  return Value(items_of(v));
}

Value f_join(Interpreter& in, const Value& v, CallArgs& a) {
  ArgReader r("join", a, {"d", "attribute"});
  const std::string sep = r.get(0) ? to_str(*r.get(0)) : "";
  const auto parts = r.get(1) ? attribute_parts(*r.get(1)) : std::vector<Value>{};
  std::string out;
  bool first = true;
  for (auto held = iterate(v); const auto& item : *held) {
    if (!first) out += sep;
    first = false;
    append_str(out, parts.empty() ? item : lookup_path(in, item, parts));
    in.check_size(out.size());
  }
  return Value(std::move(out));
}

Value f_reverse(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader("reverse", a, {});
  if (v.is_string()) return slice(v, Value::none(), Value::none(), Value(int64_t{-1}));
  ValueList items = items_of(v);
  std::reverse(items.begin(), items.end());
  return generator(std::move(items));
}

Value f_items(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader("items", a, {});
  if (v.is_undefined()) return generator({});
  if (!v.is_dict()) type_error("Can only get item pairs from a mapping.");
  ValueList out;
  for (const auto& [k, val] : v.dict().items())
    out.push_back(Value(ValueList{k, val}, ListKind::Tuple));
  return generator(std::move(out));
}

// Stable sort with Python's `sorted(key=..., reverse=...)` semantics.
static void sort_by_keys(ValueList& items, std::vector<Value> keys, bool reverse) {
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return reverse ? less(keys[y], keys[x]) : less(keys[x], keys[y]);
  });
  ValueList sorted;
  sorted.reserve(items.size());
  for (size_t i : order) sorted.push_back(items[i]);
  items = std::move(sorted);
}

Value f_dictsort(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader r("dictsort", a, {"case_sensitive", "by", "reverse"});
  const bool case_sensitive = r.get_or(0, kFalse).truthy();
  const std::string by = r.get(1) ? to_str(*r.get(1)) : "key";
  const bool reverse = r.get_or(2, kFalse).truthy();
  if (by != "key" && by != "value")
    fail("FilterArgumentError", "You can only sort by either \"key\" or \"value\"");
  if (!v.is_dict()) {
    if (v.is_undefined()) undefined_error(v);
    fail("UndefinedError", cat("'", v.type_name(), " object' has no attribute 'items'"));
  }
  ValueList items;
  std::vector<Value> keys;
  for (const auto& [k, val] : v.dict().items()) {
    items.push_back(Value(ValueList{k, val}, ListKind::Tuple));
    const Value& key = by == "key" ? k : val;
    keys.push_back(case_sensitive ? key : ignore_case(key));
  }
  sort_by_keys(items, std::move(keys), reverse);
  return Value(std::move(items));
}

Value f_sort(Interpreter& in, const Value& v, CallArgs& a) {
  ArgReader r("sort", a, {"reverse", "case_sensitive", "attribute"});
  const bool reverse = r.get_or(0, kFalse).truthy();
  const bool case_sensitive = r.get_or(1, kFalse).truthy();
  // make_multi_attrgetter: "a,b" sorts by a then b; the key is always a list.
  std::vector<std::vector<Value>> attrs;
  const Value& attribute = r.get_or(2, kNone);
  if (attribute.is_string()) {
    for (const auto& part : py::split(attribute.str(), std::string(","), -1))
      attrs.push_back(attribute_parts(Value(part)));
  } else {
    attrs.push_back(attribute_parts(attribute));
  }
  ValueList items = items_of(v);
  std::vector<Value> keys;
  for (const auto& item : items) {
    ValueList key;
    for (const auto& parts : attrs) {
      Value k = lookup_path(in, item, parts);
      key.push_back(case_sensitive ? k : ignore_case(k));
    }
    keys.emplace_back(std::move(key));
  }
  sort_by_keys(items, std::move(keys), reverse);
  return Value(std::move(items));
}

Value f_unique(Interpreter& in, const Value& v, CallArgs& a) {
  ArgReader r("unique", a, {"case_sensitive", "attribute"});
  const bool case_sensitive = r.get_or(0, kFalse).truthy();
  const auto parts = attribute_parts(r.get_or(1, kNone));
  ValueList out, seen;
  for (auto held = iterate(v); const auto& item : *held) {
    Value key = lookup_path(in, item, parts);
    if (!case_sensitive) key = ignore_case(key);
    if (key.is_list() || key.is_dict())
      type_error("unhashable type: '" + std::string(key.type_name()) + "'");
    if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return equals(s, key); })) {
      seen.push_back(key);
      out.push_back(item);
    }
  }
  return generator(std::move(out));
}

static Value min_max(Interpreter& in, const Value& v, CallArgs& a, bool want_max) {
  ArgReader r(want_max ? "max" : "min", a, {"case_sensitive", "attribute"});
  const bool case_sensitive = r.get_or(0, kFalse).truthy();
  const auto parts = attribute_parts(r.get_or(1, kNone));
  auto items = iterate(v);
  if (items->empty()) return Value::undefined_hint("No aggregated item, sequence was empty.");
  size_t best = 0;
  Value best_key;
  for (size_t i = 0; i < items->size(); ++i) {
    Value key = lookup_path(in, (*items)[i], parts);
    if (!case_sensitive) key = ignore_case(key);
    if (i == 0 || (want_max ? less(best_key, key) : less(key, best_key))) {
      best = i;
      best_key = key;
    }
  }
  return (*items)[best];
}

Value f_min(Interpreter& in, const Value& v, CallArgs& a) {
  return min_max(in, v, a, false);
}
Value f_max(Interpreter& in, const Value& v, CallArgs& a) {
  return min_max(in, v, a, true);
}

Value f_sum(Interpreter& in, const Value& v, CallArgs& a) {
  ArgReader r("sum", a, {"attribute", "start"});
  const auto parts = attribute_parts(r.get_or(0, kNone));
  Value total = r.get(1) ? *r.get(1) : Value(int64_t{0});
  if (total.is_string()) type_error("sum() can't sum strings [use ''.join(seq) instead]");
  for (auto held = iterate(v); const auto& item : *held)
    total = binary(BinOp::Add, total, lookup_path(in, item, parts));
  return total;
}

Value f_batch(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader r("batch", a, {"linecount", "fill_with"});
  if (!r.get(0)) type_error("do_batch() missing 1 required positional argument: 'linecount'");
  const int64_t n = as_int_arg(*r.get(0));
  const Value* fill = r.get(1);
  ValueList out, row;
  for (auto held = iterate(v); const auto& item : *held) {
    if (static_cast<int64_t>(row.size()) == n) {
      out.emplace_back(std::move(row));
      row.clear();
    }
    row.push_back(item);
  }
  if (!row.empty()) {
    if (fill && !fill->is_none()) {
      while (static_cast<int64_t>(row.size()) < n) row.push_back(*fill);
    }
    out.emplace_back(std::move(row));
  }
  return generator(std::move(out));
}

Value f_slice(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader r("slice", a, {"slices", "fill_with"});
  if (!r.get(0)) type_error("do_slice() missing 1 required positional argument: 'slices'");
  const int64_t slices = as_int_arg(*r.get(0));
  if (slices <= 0) fail("ZeroDivisionError", "integer division or modulo by zero");
  const Value* fill = r.get(1);
  ValueList seq = items_of(v), out;
  const auto length = static_cast<int64_t>(seq.size());
  const int64_t per = length / slices, extra = length % slices;
  int64_t offset = 0;
  for (int64_t k = 0; k < slices; ++k) {
    const int64_t start = offset + k * per;
    if (k < extra) ++offset;
    const int64_t end = offset + (k + 1) * per;
    ValueList part(seq.begin() + start, seq.begin() + end);
    if (fill && !fill->is_none() && k >= extra) part.push_back(*fill);
    out.emplace_back(std::move(part));
  }
  return generator(std::move(out));
}

Value f_groupby(Interpreter& in, const Value& v, CallArgs& a) {
  ArgReader r("groupby", a, {"attribute", "default", "case_sensitive"});
  if (!r.get(0)) type_error("do_groupby() missing 1 required positional argument: 'attribute'");
  const auto parts = attribute_parts(*r.get(0));
  const Value* fallback = r.get(1);
  const bool case_sensitive = r.get_or(2, kFalse).truthy();
  ValueList items = items_of(v);
  std::vector<Value> keys;
  for (const auto& item : items) {
    Value k = lookup_path(in, item, parts, fallback);
    keys.push_back(case_sensitive ? k : ignore_case(k));
  }
  sort_by_keys(items, keys, false);
  ValueList groups;
  ValueList current;
  Value current_key;
  auto flush = [&] {
    if (current.empty()) return;
    Value grouper =
        case_sensitive ? current_key : lookup_path(in, current.front(), parts, fallback);
    groups.push_back(Value(ValueList{grouper, Value(std::move(current))}, ListKind::Tuple));
    current.clear();
  };
  for (const auto& item : items) {
    Value k = lookup_path(in, item, parts, fallback);
    if (!case_sensitive) k = ignore_case(k);
    if (!current.empty() && !equals(k, current_key)) flush();
    current_key = k;
    current.push_back(item);
  }
  flush();
  return Value(std::move(groups));
}

Value f_map(Interpreter& in, const Value& v, CallArgs& a) {
  ValueList out;
  if (!v.truthy()) return generator({});
  auto attr_it = std::find_if(a.kwargs.begin(), a.kwargs.end(),
                              [](const auto& kv) { return kv.first == "attribute"; });
  if (a.positional.empty() && attr_it != a.kwargs.end()) {
    Value fallback = Value::none();
    for (const auto& [k, val] : a.kwargs) {
      if (k == "default") {
        fallback = val;
      } else if (k != "attribute") {
        fail("FilterArgumentError", "Unexpected keyword argument '" + k + "'");
      }
    }
    const auto parts = attribute_parts(attr_it->second);
    for (auto held = iterate(v); const auto& item : *held)
      out.push_back(lookup_path(in, item, parts, &fallback));
    return generator(std::move(out));
  }
  if (a.positional.empty()) fail("FilterArgumentError", "map requires a filter argument");
  const std::string name = to_str(a.positional[0]);
  for (auto held = iterate(v); const auto& item : *held) {
    CallArgs rest;
    rest.positional.assign(a.positional.begin() + 1, a.positional.end());
    rest.kwargs = a.kwargs;
    out.push_back(in.apply_filter(name, item, rest));
  }
  return generator(std::move(out));
}

static Value select_reject(Interpreter& in, const Value& v, CallArgs& a, bool select,
                           bool by_attr) {
  if (!v.truthy()) return generator({});
  size_t off = 0;
  std::vector<Value> parts;
  if (by_attr) {
    if (a.positional.empty()) fail("FilterArgumentError", "Missing parameter for attribute name");
    parts = attribute_parts(a.positional[0]);
    off = 1;
  }
  const bool has_test = a.positional.size() > off;
  const std::string test = has_test ? to_str(a.positional[off]) : "";
  ValueList out;
  for (auto held = iterate(v); const auto& item : *held) {
    Value x = by_attr ? lookup_path(in, item, parts) : item;
    bool ok;
    if (has_test) {
      CallArgs rest;
      rest.positional.assign(a.positional.begin() + static_cast<long>(off) + 1, a.positional.end());
      rest.kwargs = a.kwargs;
      ok = in.apply_test(test, x, rest);
    } else {
      ok = x.truthy();
    }
    if (ok == select) out.push_back(item);
  }
  return generator(std::move(out));
}

Value f_select(Interpreter& in, const Value& v, CallArgs& a) {
  return select_reject(in, v, a, true, false);
}
Value f_reject(Interpreter& in, const Value& v, CallArgs& a) {
  return select_reject(in, v, a, false, false);
}
Value f_selectattr(Interpreter& in, const Value& v, CallArgs& a) {
  return select_reject(in, v, a, true, true);
}
Value f_rejectattr(Interpreter& in, const Value& v, CallArgs& a) {
  return select_reject(in, v, a, false, true);
}

Value f_attr(Interpreter& in, const Value& v, CallArgs& a) {
  ArgReader r("attr", a, {"name"});
  if (!r.get(0)) type_error("do_attr() missing 1 required positional argument: 'name'");
  const std::string name = to_str(*r.get(0));
  bool unsafe = false;
  if ((v.is_string() || v.is_list() || v.is_dict()) && has_method(v, name, unsafe))
    return in.getattr(v, name);
  if (v.is_object()) {
    Value out;
    if (v.object().get_attr(name, out)) return out;
  }
  return Value::undefined_attr(v, name);
}

Value f_random(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader("random", a, {});
  auto items = iterate(v);
  if (items->empty()) return Value::undefined_hint("No random item, sequence was empty.");
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  return (*items)[rng() % items->size()];
}

// transformers: json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)
Value f_tojson(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader r("tojson", a, {"ensure_ascii", "indent", "separators", "sort_keys"});
  JsonOptions options;
  options.ensure_ascii = r.get_or(0, kFalse).truthy();
  if (const Value* indent = r.get(1); indent && !indent->is_none()) {
    if (indent->is_string()) {
      options.indent = indent->str();
    } else {
      const auto width = static_cast<size_t>(std::max<int64_t>(as_int_arg(*indent), 0));
      check_build(width);
      options.indent = std::string(width, ' ');
    }
  }
  if (const Value* seps = r.get(2); seps && !seps->is_none()) {
    auto items = iterate(*seps);
    if (items->size() != 2) fail("ValueError", "separators must be a pair of strings");
    options.separators = std::make_pair(to_str((*items)[0]), to_str((*items)[1]));
  }
  options.sort_keys = r.get_or(3, kFalse).truthy();
  return Value(json_dumps(v, options));
}

}  // namespace heron::chat::jinja::filters
