#pragma once
// Shared by the filter files: argument helpers, jinja2's attribute paths ("a.b.0") and the
// filter functions the table in filters.cpp maps names to.
#include <optional>
#include <string>
#include <vector>

#include "heron/template/ast.h"

namespace heron::chat::jinja::filters {

inline const Value kNone = Value::none();
inline const Value kFalse = Value(false);
inline const Value kEmpty = Value(std::string());

int64_t as_int_arg(const Value& v);
std::optional<std::string> opt_str(const Value* v);
Value generator(ValueList items);  // what jinja2's generator filters return
// make_attrgetter: "a.b.0" looks up a, then b, then index 0 (digits become ints).
std::vector<Value> attribute_parts(const Value& attribute);
Value lookup_path(Interpreter& in, Value item, const std::vector<Value>& parts,
                  const Value* fallback = nullptr);
Value ignore_case(const Value& v);
ValueList items_of(const Value& v);

Value f_abs(Interpreter& in, const Value& v, CallArgs& a);
Value f_attr(Interpreter& in, const Value& v, CallArgs& a);
Value f_batch(Interpreter& in, const Value& v, CallArgs& a);
Value f_capitalize(Interpreter& in, const Value& v, CallArgs& a);
Value f_center(Interpreter& in, const Value& v, CallArgs& a);
Value f_default(Interpreter& in, const Value& v, CallArgs& a);
Value f_dictsort(Interpreter& in, const Value& v, CallArgs& a);
Value f_escape(Interpreter& in, const Value& v, CallArgs& a);
Value f_forceescape(Interpreter& in, const Value& v, CallArgs& a);
Value f_filesizeformat(Interpreter& in, const Value& v, CallArgs& a);
Value f_first(Interpreter& in, const Value& v, CallArgs& a);
Value f_float(Interpreter& in, const Value& v, CallArgs& a);
Value f_format(Interpreter& in, const Value& v, CallArgs& a);
Value f_groupby(Interpreter& in, const Value& v, CallArgs& a);
Value f_indent(Interpreter& in, const Value& v, CallArgs& a);
Value f_int(Interpreter& in, const Value& v, CallArgs& a);
Value f_items(Interpreter& in, const Value& v, CallArgs& a);
Value f_join(Interpreter& in, const Value& v, CallArgs& a);
Value f_last(Interpreter& in, const Value& v, CallArgs& a);
Value f_length(Interpreter& in, const Value& v, CallArgs& a);
Value f_list(Interpreter& in, const Value& v, CallArgs& a);
Value f_lower(Interpreter& in, const Value& v, CallArgs& a);
Value f_map(Interpreter& in, const Value& v, CallArgs& a);
Value f_max(Interpreter& in, const Value& v, CallArgs& a);
Value f_min(Interpreter& in, const Value& v, CallArgs& a);
Value f_pprint(Interpreter& in, const Value& v, CallArgs& a);
Value f_random(Interpreter& in, const Value& v, CallArgs& a);
Value f_reject(Interpreter& in, const Value& v, CallArgs& a);
Value f_rejectattr(Interpreter& in, const Value& v, CallArgs& a);
Value f_replace(Interpreter& in, const Value& v, CallArgs& a);
Value f_reverse(Interpreter& in, const Value& v, CallArgs& a);
Value f_round(Interpreter& in, const Value& v, CallArgs& a);
Value f_safe(Interpreter& in, const Value& v, CallArgs& a);
Value f_select(Interpreter& in, const Value& v, CallArgs& a);
Value f_selectattr(Interpreter& in, const Value& v, CallArgs& a);
Value f_slice(Interpreter& in, const Value& v, CallArgs& a);
Value f_sort(Interpreter& in, const Value& v, CallArgs& a);
Value f_string(Interpreter& in, const Value& v, CallArgs& a);
Value f_striptags(Interpreter& in, const Value& v, CallArgs& a);
Value f_sum(Interpreter& in, const Value& v, CallArgs& a);
Value f_title(Interpreter& in, const Value& v, CallArgs& a);
Value f_tojson(Interpreter& in, const Value& v, CallArgs& a);
Value f_trim(Interpreter& in, const Value& v, CallArgs& a);
Value f_truncate(Interpreter& in, const Value& v, CallArgs& a);
Value f_unique(Interpreter& in, const Value& v, CallArgs& a);
Value f_upper(Interpreter& in, const Value& v, CallArgs& a);
Value f_urlencode(Interpreter& in, const Value& v, CallArgs& a);
Value f_wordcount(Interpreter& in, const Value& v, CallArgs& a);
Value f_wordwrap(Interpreter& in, const Value& v, CallArgs& a);
Value f_xmlattr(Interpreter& in, const Value& v, CallArgs& a);

}  // namespace heron::chat::jinja::filters
