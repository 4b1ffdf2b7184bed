// Expression evaluation: names, attribute and item access as the sandbox does them,
// calls, filters, tests, operators, literals.
#include "heron/template/interpreter.h"

#include <cstdint>
#include <cstring>

#include "heron/core/error.h"
#include "heron/template/builtins.h"
#include "heron/template/failure.h"
#include "heron/template/objects.h"
#include "heron/template/ops.h"
#include "heron/template/same_text.h"

namespace heron::chat::jinja {

namespace {

Value unsafe_undefined(const Value& obj, std::string_view name) {
  return Value::undefined_hint("access to attribute '" + std::string(name) + "' of '" +
                               std::string(obj.type_name()) + "' object is unsafe.");
}

bool dunder(std::string_view name) {
  return name.size() >= 2 && name.substr(0, 2) == "__";
}

}  // namespace

Value Interpreter::lookup(const NameExpr& n) {
  return lookup_ref(n.slot);
}

// The object of obj.attr / obj[key]: a plain name is read in place (the hot case).
Value Interpreter::eval_object(const Expr& e) {
  if (e.kind == ExprKind::Name) return lookup_ref(static_cast<const NameExpr&>(e).slot);
  return eval(e);
}

const Value& Interpreter::operand(const Expr& e, Value& scratch) {
  switch (e.kind) {
    case ExprKind::Const:
      return static_cast<const ConstExpr&>(e).value;
    case ExprKind::Name:
      return lookup_ref(static_cast<const NameExpr&>(e).slot);
    default:
      break;
  }
  scratch = eval(e);
  return scratch;
}

namespace {

// Copies n bytes, B <= n <= 2B, as two blocks of B that overlap in the middle.
template <size_t B>
inline void copy_ends(char* dst, const char* src, size_t n) {
  char head[B], tail[B];
  std::memcpy(head, src, B);
  std::memcpy(tail, src + n - B, B);
  std::memcpy(dst, head, B);
  std::memcpy(dst + n - B, tail, B);
}

// memcpy without the call for the short pieces templates print (tags, roles, newlines).
inline void copy_piece(char* dst, const std::string& piece) {
  const char* src = piece.data();
  const size_t n = piece.size();
  if (n >= 8 && n <= 16) {
    copy_ends<8>(dst, src, n);
  } else if (n >= 4 && n < 8) {
    copy_ends<4>(dst, src, n);
  } else if (n < 4) {
    for (size_t i = 0; i < n; ++i) dst[i] = src[i];
  } else if (n <= 32) {
    copy_ends<16>(dst, src, n);
  } else {
    std::memcpy(dst, src, n);
  }
}

}  // namespace

bool Interpreter::append_pieces(const PrintStmt& print, Output& out) {
  if (print.pieces.empty()) return false;
  // The write position and its limit live in locals: stores into the text cannot alias
  // them, so they stay in registers across the pieces.
  char* at = out.end();
  const char* limit = out.limit();
  for (const StrRead& r : print.pieces) {
    const std::string* piece = r.kind == StrRead::Kind::Text ? r.text : read_string(r);
    if (!piece) return false;  // not a plain str: the caller evaluates the expression in full
    const size_t n = piece->size();
    if (limit - at < static_cast<ptrdiff_t>(n)) {
      at = out.grow_at(at, n);
      limit = out.limit();
    }
    copy_piece(at, *piece);
    at += n;
  }
  out.commit(at);
  if (out.size() > settings_.limits.max_output_bytes) output_limit_exceeded_at(print.pos);
  return true;
}

bool Interpreter::literal_compare(const CompareExpr& c) {
  return c.ops.size() == 1 && c.ops[0].second->kind == ExprKind::Const &&
         (c.ops[0].first == CmpOp::Eq || c.ops[0].first == CmpOp::Ne);
}

// x == 'literal': no evaluation of the literal, a direct string comparison.
bool Interpreter::compare_literal(const CompareExpr& c) {
  if (c.literal) {
    if (const std::string* s = read_string(c.first->read))
      return same_text(*s, *c.literal) == c.equal;
  }
  const Value& right = static_cast<const ConstExpr&>(*c.ops[0].second).value;
  const bool eq = c.ops[0].first == CmpOp::Eq;
  Value scratch;
  const Value& first = operand(*c.first, scratch);
  const bool same =
      first.is_string() && right.is_string() ? first.str() == right.str() : equals(first, right);
  return same == eq;
}

// 'key' in var / 'key' not in var (CompareExpr::key_in), var a dict: the key lookup alone
// (Dict::contains reads the JSON while the members are there); nullopt when var is not a
// dict (the caller evaluates the comparison in full).
std::optional<bool> Interpreter::key_in_dict(const CompareExpr& c) {
  const Value& container = lookup_ref(c.key_in.slot);
  if (!container.is_dict()) return std::nullopt;
  return container.dict().contains(static_cast<const ConstExpr&>(*c.first).value) == c.equal;
}

bool Interpreter::truth(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Not:
      return !truth(*static_cast<const UnaryExpr&>(e).operand);
    case ExprKind::And: {
      const auto& b = static_cast<const BinaryExpr&>(e);
      if (std::optional<bool> t = member_truth(b.guarded)) return *t;  // 'k' in x and x['k']
      return truth(*b.left) && truth(*b.right);
    }
    case ExprKind::Or: {
      const auto& b = static_cast<const BinaryExpr&>(e);
      return truth(*b.left) || truth(*b.right);
    }
    case ExprKind::Const:
    case ExprKind::Name: {
      Value scratch;
      return operand(e, scratch).truthy();
    }
    case ExprKind::GetAttr:
    case ExprKind::GetItem:
      if (std::optional<bool> t = member_truth(e.read)) return *t;
      break;
    case ExprKind::Compare: {
      const auto& c = static_cast<const CompareExpr&>(e);
      if (c.key_in.kind == StrRead::Kind::Member) {
        if (std::optional<bool> t = key_in_dict(c)) return *t;
        break;
      }
      if (!literal_compare(c)) break;
      try {
        return compare_literal(c);
      } catch (const Failure& f) {
        rethrow_at(f, e.pos);
      }
    }
    default:
      break;
  }
  return eval(e).truthy();
}

Value Interpreter::getattr(const Value& obj, std::string_view name) {
  bool unsafe = false;
  switch (obj.kind()) {
    case Kind::Undefined:
      undefined_error(obj);
    case Kind::Dict:
      if (has_method(obj, name, unsafe)) {
        if (unsafe) return unsafe_undefined(obj, name);
        return Value(std::make_shared<BoundMethod>(obj, std::string(name)));
      }
      if (dunder(name)) return unsafe_undefined(obj, name);
      if (Value v; obj.dict().find(name, v)) return v;
      break;
    case Kind::String:
    case Kind::List:
      if (has_method(obj, name, unsafe)) {
        if (unsafe) return unsafe_undefined(obj, name);
        return Value(std::make_shared<BoundMethod>(obj, std::string(name)));
      }
      if (dunder(name)) return unsafe_undefined(obj, name);
      break;
    case Kind::Object: {
      Value out;
      if (obj.object().get_attr(name, out)) return out;
      break;
    }
    default:
      if (dunder(name)) return unsafe_undefined(obj, name);
      break;
  }
  return Value::undefined_attr(obj, std::string(name));
}

Value Interpreter::getitem(const Value& obj, const Value& key) {
  if (obj.is_undefined()) undefined_error(obj);
  if (auto v = subscript(obj, key)) return *v;
  if (key.is_string()) {
    bool unsafe = false;
    if ((obj.is_string() || obj.is_list() || obj.is_dict()) && has_method(obj, key.str(), unsafe)) {
      if (unsafe) return unsafe_undefined(obj, key.str());
      return Value(std::make_shared<BoundMethod>(obj, key.str()));
    }
    if (obj.is_object()) {
      Value out;
      if (obj.object().get_attr(key.str(), out)) return out;
    }
  }
  return Value::undefined_key(obj, key);
}

Value Interpreter::call(const Value& callee, CallArgs& args) {
  if (callee.is_undefined()) undefined_error(callee);
  if (callee.is_object() && callee.object().callable()) return callee.object().call(*this, args);
  type_error("'" + std::string(callee.type_name()) + "' object is not callable");
}

void Interpreter::eval_args(const Arguments& a, CallArgs& out) {
  out.positional.reserve(a.args.size());
  for (const auto& e : a.args) out.positional.push_back(eval(*e));
  for (const auto& [key, e] : a.kwargs) out.kwargs.emplace_back(key, eval(*e));
  if (a.dyn_args) {
    auto items = iterate(eval(*a.dyn_args));
    out.positional.insert(out.positional.end(), items->begin(), items->end());
  }
  if (a.dyn_kwargs) {
    Value d = eval(*a.dyn_kwargs);
    if (!d.is_dict())
      type_error("argument after ** must be a mapping, not " + std::string(d.type_name()));
    for (const auto& [k, v] : d.dict().items()) out.kwargs.emplace_back(to_str(k), v);
  }
}

Value Interpreter::eval_call(const CallExpr& e) {
  CallArgs args;
  if (e.callee->kind == ExprKind::GetAttr) {
    // obj.method(...): call str/list/dict methods directly, without a bound-method object.
    const auto& g = static_cast<const GetAttrExpr&>(*e.callee);
    Value obj = eval(*g.obj);
    bool unsafe = false;
    if ((obj.is_string() || obj.is_list() || obj.is_dict()) && has_method(obj, g.attr, unsafe) &&
        !unsafe) {
      eval_args(e.args, args);
      return call_method(*this, obj, g.attr, args);
    }
    Value fn = getattr(obj, g.attr);
    eval_args(e.args, args);
    return call(fn, args);
  }
  Value fn = eval(*e.callee);
  eval_args(e.args, args);
  return call(fn, args);
}

Value Interpreter::eval_filter(const FilterExpr& f, const Value* input) {
  try {
    Value operand = f.operand ? eval_filter_operand(f, input) : *input;
    CallArgs args;
    eval_args(f.args, args);
    if (!f.filter) fail("TemplateRuntimeError", "No filter named '" + f.name + "' found.");
    Value result = f.filter(*this, operand, args);
    if (result.is_string()) check_size(result.str().size());
    return result;
  } catch (const Failure& failure) {
    rethrow_at(failure, f.pos);
  }
}

Value Interpreter::eval_filter_operand(const FilterExpr& f, const Value* input) {
  if (f.operand->kind == ExprKind::Filter) {
    return eval_filter(static_cast<const FilterExpr&>(*f.operand), input);
  }
  return eval(*f.operand);
}

Value Interpreter::apply_filter(std::string_view name, const Value& v, CallArgs& args) {
  FilterFn fn = find_filter(name);
  if (!fn) fail("TemplateRuntimeError", "No filter named '" + std::string(name) + "' found.");
  return fn(*this, v, args);
}

bool Interpreter::apply_test(std::string_view name, const Value& v, CallArgs& args) {
  TestFn fn = find_test(name);
  if (!fn) fail("TemplateRuntimeError", "No test named '" + std::string(name) + "' found.");
  return fn(*this, v, args);
}

bool Interpreter::compare(CmpOp op, const Value& a, const Value& b) {
  switch (op) {
    case CmpOp::Eq:
      return equals(a, b);
    case CmpOp::Ne:
      return !equals(a, b);
    case CmpOp::Lt:
      return less(a, b, "<");
    case CmpOp::Le:
      return less(a, b, "<=") || equals(a, b);
    case CmpOp::Gt:
      return !less(a, b, ">") && !equals(a, b);
    case CmpOp::Ge:
      return !less(a, b, ">=");
    case CmpOp::In:
      return contains(b, a);
    case CmpOp::NotIn:
      return !contains(b, a);
  }
  return false;
}

void Interpreter::print(const Value& v, Output& out) {
  if (v.is_string()) {
    out += v.str();
  } else {
    std::string text;
    append_str(text, v);
    out += text;
  }
}

void Interpreter::append_expr(const Expr& e, Output& out) {
  if (e.kind == ExprKind::Concat) {
    for (const auto& part : static_cast<const ConcatExpr&>(e).parts) {
      append_expr(*part, out);
      check_size(out.size());
    }
    return;
  }
  if (e.kind == ExprKind::Binary && static_cast<const BinaryExpr&>(e).op == BinOp::Add) {
    Value result;
    const size_t mark = out.size();
    if (!add_chain(static_cast<const BinaryExpr&>(e), &out, result)) {
      out.erase(mark);
      print(result, out);
    }
    return;
  }
  if (const std::string* s = read_string(e.read)) {  // {{ message['content'] }}
    out += *s;
    return;
  }
  print(eval(e), out);
}

// `s1 + s2 + ...` where s1 is a string: Python requires every operand to be a string too,
// so the pieces are appended to `text` one by one (no string per `+`) and true is
// returned (`result` is then a Markup when the text is one). Otherwise the chain is
// folded with Python's `+` into `result`.
template <class Text>
bool Interpreter::add_chain(const BinaryExpr& e, Text* text, Value& result) {
  const BinaryExpr* chain[32];
  size_t n = 0;
  const Expr* first = &e;
  while (first->kind == ExprKind::Binary && n < 32) {
    const auto& b = static_cast<const BinaryExpr&>(*first);
    if (b.op != BinOp::Add) break;
    chain[n++] = &b;
    first = b.left.get();
  }
  Value scratch;
  const size_t start = text->size();
  bool strings = true, markup = false;
  if (const std::string* s = read_string(first->read)) {
    *text += *s;
  } else {
    const Value& head = operand(*first, scratch);
    strings = head.is_string();
    markup = strings && head.is_markup();
    if (strings) {
      *text += head.str();
    } else {
      result = head;
    }
  }
  auto append = [&](const Value& right) {
    if (!markup && !right.is_markup()) {  // plain strings: the hot case
      text->append(right.str());
      check_size(text->size());
      return;
    }
    if (!markup) {  // Markup.__radd__: escape what came before
      std::string before(std::string_view(*text).substr(start));
      text->erase(start);
      std::string escaped;
      append_html_escaped(escaped, before);
      *text += escaped;
      markup = true;
    }
    if (markup && !right.is_markup()) {
      std::string escaped;
      append_html_escaped(escaped, right.str());
      *text += escaped;
    } else {
      *text += right.str();
    }
    check_size(text->size());
  };
  for (size_t i = n; i-- > 0;) {
    const Expr& piece = *chain[i]->right;
    if (strings && !markup) {  // str + str: the hot case
      if (const std::string* s = read_string(piece.read)) {
        text->append(*s);
        check_size(text->size());
        continue;
      }
    }
    const Value& right = operand(piece, scratch);
    if (strings && right.is_string()) {
      append(right);
      continue;
    }
    try {
      // Raises Python's TypeError for a string chain; adds numbers, lists, ... otherwise.
      const Value text_so_far = markup ? Value::markup(std::string()) : Value(std::string());
      result = binary(BinOp::Add, strings ? text_so_far : result, right);
    } catch (const Failure& f) {
      rethrow_at(f, chain[i]->pos);
    }
  }
  if (markup) result = Value::markup(std::string());  // tells the caller: a Markup
  return strings;
}

Value Interpreter::eval(const Expr& e) {
  try {
    return eval_inner(e);
  } catch (const Failure& f) {
    rethrow_at(f, e.pos);
  }
}

Value Interpreter::eval_inner(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Const:
      return static_cast<const ConstExpr&>(e).borrowed;
    case ExprKind::Name:
      return lookup(static_cast<const NameExpr&>(e));
    case ExprKind::GetAttr: {
      const auto& g = static_cast<const GetAttrExpr&>(e);
      if (g.obj->kind == ExprKind::Name) {  // message.role: read the variable in place
        // Lowered: on a dict, this attribute is known to be an item (no method lookup).
        if (Value v; read_item(e.read, v)) return v;
        return getattr(lookup_ref(static_cast<const NameExpr&>(*g.obj).slot), g.attr);
      }
      return getattr(eval(*g.obj), g.attr);
    }
    case ExprKind::GetItem: {
      const auto& g = static_cast<const GetItemExpr&>(e);
      if (g.obj->kind == ExprKind::Name && g.key->kind == ExprKind::Const) {
        // message['role']: the variable is read in place, no copy of it is made.
        const Value& obj = lookup_ref(static_cast<const NameExpr&>(*g.obj).slot);
        const Value& key = static_cast<const ConstExpr&>(*g.key).value;
        if (obj.is_dict() && key.is_string()) {
          if (Value v; obj.dict().find(std::string_view(key.str()), v)) return v;
        }
        return getitem(obj, key);
      }
      Value obj = eval_object(*g.obj);
      if (obj.is_dict() && g.key->kind == ExprKind::Const) {  // message['role']
        const Value& key = static_cast<const ConstExpr&>(*g.key).value;
        if (key.is_string()) {
          if (Value v; obj.dict().find(std::string_view(key.str()), v)) return v;
        }
      }
      return getitem(obj, eval(*g.key));
    }
    case ExprKind::Slice: {
      const auto& s = static_cast<const SliceExpr&>(e);
      Value obj = eval(*s.obj);
      Value start = s.start ? eval(*s.start) : Value::none();
      Value stop = s.stop ? eval(*s.stop) : Value::none();
      Value step = s.step ? eval(*s.step) : Value::none();
      return slice(obj, start, stop, step);
    }
    case ExprKind::Call: {
      Value result = eval_call(static_cast<const CallExpr&>(e));
      if (result.is_string()) check_size(result.str().size());
      return result;
    }
    case ExprKind::Filter:
      return eval_filter(static_cast<const FilterExpr&>(e), nullptr);
    case ExprKind::Test: {
      const auto& t = static_cast<const FilterExpr&>(e);
      Value operand = eval(*t.operand);
      CallArgs args;
      eval_args(t.args, args);
      if (!t.test) fail("TemplateRuntimeError", "No test named '" + t.name + "' found.");
      return Value(t.test(*this, operand, args));
    }
    case ExprKind::Not:
      return Value(!truth(*static_cast<const UnaryExpr&>(e).operand));
    case ExprKind::Neg:
      return negate(eval(*static_cast<const UnaryExpr&>(e).operand));
    case ExprKind::Plus:
      return positive(eval(*static_cast<const UnaryExpr&>(e).operand));
    case ExprKind::Binary: {
      const auto& b = static_cast<const BinaryExpr&>(e);
      if (b.op == BinOp::Add) {
        std::string text;
        Value result;
        if (!add_chain(b, &text, result)) return result;
        return result.is_markup() ? Value::markup(std::move(text)) : Value(std::move(text));
      }
      Value left = eval(*b.left);
      Value result = binary(b.op, left, eval(*b.right));
      if (result.is_string()) check_size(result.str().size());
      return result;
    }
    case ExprKind::And: {
      const auto& b = static_cast<const BinaryExpr&>(e);
      Value left = eval(*b.left);
      return left.truthy() ? eval(*b.right) : left;
    }
    case ExprKind::Or: {
      const auto& b = static_cast<const BinaryExpr&>(e);
      Value left = eval(*b.left);
      return left.truthy() ? left : eval(*b.right);
    }
    case ExprKind::Concat: {
      std::string out;
      for (const auto& part : static_cast<const ConcatExpr&>(e).parts) {
        append_str(out, eval(*part));
        check_size(out.size());
      }
      return Value(std::move(out));
    }
    case ExprKind::Compare: {
      const auto& c = static_cast<const CompareExpr&>(e);
      if (literal_compare(c)) return Value(compare_literal(c));
      Value left = eval(*c.first);
      for (const auto& [op, expr] : c.ops) {
        Value right = eval(*expr);
        if (!compare(op, left, right)) return Value(false);
        left = std::move(right);
      }
      return Value(true);
    }
    case ExprKind::Cond: {
      const auto& c = static_cast<const CondExpr&>(e);
      if (truth(*c.test)) return eval(*c.then);
      if (c.otherwise) return eval(*c.otherwise);
      return Value::undefined_hint("the inline if-expression on line " +
                                   std::to_string(e.pos.line) +
                                   " evaluated to false and no else section was defined.");
    }
    case ExprKind::List:
    case ExprKind::Tuple: {
      const auto& l = static_cast<const ListExpr&>(e);
      ValueList items;
      items.reserve(l.items.size());
      for (const auto& item : l.items) items.push_back(eval(*item));
      return Value(std::move(items), e.kind == ExprKind::Tuple ? ListKind::Tuple : ListKind::List);
    }
    case ExprKind::Dict: {
      Dict dict;
      for (const auto& [k, v] : static_cast<const DictExpr&>(e).items) {
        Value key = eval(*k);
        dict.set(std::move(key), eval(*v));
      }
      return Value(std::move(dict));
    }
  }
  return Value();
}

}  // namespace heron::chat::jinja
