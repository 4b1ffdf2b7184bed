// Statement execution: output, if/for/set/macro/call/filter/with blocks, scopes, loops,
// macro calls and the render limits.
#include "heron/template/interpreter.h"

#include "heron/core/error.h"
#include "heron/template/builtins.h"
#include "heron/template/failure.h"
#include "heron/template/objects.h"
#include "heron/template/ops.h"
#include "heron/template/same_text.h"

namespace heron::chat::jinja {

void rethrow_at(const Failure& f, Pos pos) {
  std::string where = "chat template error at line " + std::to_string(pos.line) + ", column " +
                      std::to_string(pos.col) + ": ";
  // raise_exception's message is the template author's own words: pass it unchanged.
  if (f.type == "TemplateError") throw Error(where + f.message);
  throw Error(where + f.type + ": " + f.message);
}

Value& Scope::add(int slot) {
  ++live;
  return vars.emplace_back(slot, Value()).second;
}

Interpreter::Interpreter(const Program& program, std::vector<Value> globals,
                         const RenderSettings& settings)
    : program_(program),
      top_(std::move(globals)),
      settings_(settings),
      loop_slot_(program.engine.loop),
      caller_slot_(program.engine.caller),
      varargs_slot_(program.engine.varargs),
      kwargs_slot_(program.engine.kwargs) {}

Interpreter::~Interpreter() {
  for (const auto& weak : macros_) {
    if (auto macro = weak.lock()) macro->closure.reset();
  }
}

std::string Interpreter::render() {
  struct BuildLimit {  // scoped to this render on this thread
    size_t saved = max_build_bytes;
    explicit BuildLimit(size_t limit) { max_build_bytes = limit; }
    ~BuildLimit() { max_build_bytes = saved; }
  } limit(settings_.limits.max_output_bytes);
  Output out(program_.last_output_bytes.load(std::memory_order_relaxed));
  exec(program_.body, out);
  program_.last_output_bytes.store(out.size(), std::memory_order_relaxed);
  return out.take();
}

void Interpreter::output_limit_exceeded() const {
  fail("OutputLimit", "the rendered text exceeds the limit of " +
                          std::to_string(settings_.limits.max_output_bytes) + " bytes");
}

void Interpreter::output_limit_exceeded_at(Pos pos) const {
  try {
    output_limit_exceeded();
  } catch (const Failure& f) {
    rethrow_at(f, pos);
  }
}

void Interpreter::step_limit_exceeded() const {
  fail("StepLimit", "the template ran more than " + std::to_string(settings_.limits.max_steps) +
                        " loop iterations and macro calls");
}

// ------------------------------------------------------------------------ statements

std::string Interpreter::capture(const Body& body) {
  Output out;
  auto saved = scope_;
  scope_ = std::make_shared<Scope>(saved);
  try {
    exec(body, out);
  } catch (...) {
    scope_ = saved;
    throw;
  }
  scope_ = saved;
  return out.take();
}

Interpreter::Flow Interpreter::exec_stmt(const Stmt& s, Output& out) {
  try {
    switch (s.kind) {
      case StmtKind::Text:
        out += static_cast<const TextStmt&>(s).text;
        check_size(out.size());
        return Flow::Normal;
      case StmtKind::Print:  // one that exec() could not append from its pieces
        append_expr(*static_cast<const PrintStmt&>(s).expr, out);
        check_size(out.size());
        return Flow::Normal;
      case StmtKind::If:  // exec() calls exec_if itself
        return exec_if(static_cast<const IfStmt&>(s), out);
      case StmtKind::For: {
        const auto& n = static_cast<const ForStmt&>(s);
        run_for(n, eval(*n.iter), 1, out);
        return Flow::Normal;
      }
      case StmtKind::Set:
        exec_set(static_cast<const SetStmt&>(s));
        return Flow::Normal;
      case StmtKind::SetBlock:
      case StmtKind::Macro:
      case StmtKind::CallBlock:
      case StmtKind::FilterBlock:
      case StmtKind::With:
      case StmtKind::Scope:
      case StmtKind::Unsupported:
        return exec_block(s, out);
      case StmtKind::Break:
        return Flow::Break;
      case StmtKind::Continue:
        return Flow::Continue;
    }
  } catch (const Failure& f) {
    rethrow_at(f, s.pos);
  }
  return Flow::Normal;
}

Interpreter::Flow Interpreter::exec_if(const IfStmt& n, Output& out) {
  try {
    size_t i = 0;
    if (n.lowered) {
      if (const std::string* subject = read_string(n.subject)) {
        for (const IfStmt::Case& c : n.cases) {
          if (same_text(*subject, c.literal) && (!c.rest || truth(*c.rest))) {
            if (c.print) {  // the branch is one print
              if (append_pieces(*c.print, out)) return Flow::Normal;
              return exec_stmt(*n.branches[c.branch].second[0], out);  // evaluated in full
            }
            return exec_branch(n.branches[c.branch].second, out);
          }
        }
        i = n.lowered;
      }
    } else if (n.prints_test &&
               append_pieces(static_cast<const PrintStmt&>(*n.branches[0].second[0]), out)) {
      return Flow::Normal;  // `if x %}{{ x }}`, x a plain str
    }
    for (; i < n.branches.size(); ++i) {
      if (truth(*n.branches[i].first)) return exec_branch(n.branches[i].second, out);
    }
    // Often no else: the messages no branch prints (tool results, a template's first
    // pass over the messages) skip the call.
    return n.otherwise.empty() ? Flow::Normal : exec(n.otherwise, out);
  } catch (const Failure& f) {
    rethrow_at(f, n.pos);
  }
}

void Interpreter::exec_set(const SetStmt& n) {
  if (n.target.kind != Target::Kind::Name) {
    assign(n.target, eval(*n.value));
    return;
  }
  if (Value v; read_item(n.value->read, v)) {  // var['key'] found in a dict: no evaluation
    set_var(n.target.slot, std::move(v));
    return;
  }
  set_var(n.target.slot, eval(*n.value));  // {% set content = ... %}: moved, no copy
}

bool Interpreter::set_member(const SetStmt& n) {
  const StrRead& r = n.value->read;
  if (n.target.kind != Target::Kind::Name || r.kind != StrRead::Kind::Member) return false;
  const std::string* s = json_member_string(lookup_ref(r.slot), *r.text);
  if (!s) return false;
  set_var(n.target.slot, Value::borrowed(*s));
  return true;
}

// The rarer statements, apart so that exec_stmt's frame stays small for the hot ones.
Interpreter::Flow Interpreter::exec_block(const Stmt& s, Output& out) {
  switch (s.kind) {
    case StmtKind::SetBlock: {
      const auto& n = static_cast<const SetBlockStmt&>(s);
      Value text(capture(n.body));
      if (n.filter) text = eval_filter(static_cast<const FilterExpr&>(*n.filter), &text);
      assign(n.target, text);
      return Flow::Normal;
    }
    case StmtKind::Macro: {
      const auto& n = static_cast<const MacroStmt&>(s);
      set_var(n.slot, make_macro(n.name, n.params, n.body));
      return Flow::Normal;
    }
    case StmtKind::CallBlock: {
      const auto& n = static_cast<const CallBlockStmt&>(s);
      const auto& call = static_cast<const CallExpr&>(*n.call);
      Value callee = eval(*call.callee);
      CallArgs args;
      eval_args(call.args, args);
      args.kwargs.emplace_back("caller", make_macro("caller", n.params, n.body));
      print(this->call(callee, args), out);
      check_size(out.size());
      return Flow::Normal;
    }
    case StmtKind::FilterBlock: {
      const auto& n = static_cast<const FilterBlockStmt&>(s);
      Value text(capture(n.body));
      print(eval_filter(static_cast<const FilterExpr&>(*n.filter), &text), out);
      check_size(out.size());
      return Flow::Normal;
    }
    case StmtKind::With: {
      const auto& n = static_cast<const WithStmt&>(s);
      std::vector<Value> values;
      for (const auto& a : n.assigns) values.push_back(eval(*a.second));
      auto saved = scope_;
      scope_ = std::make_shared<Scope>(saved);
      try {
        for (size_t i = 0; i < values.size(); ++i) assign(n.assigns[i].first, values[i]);
        Flow flow = exec(n.body, out);
        scope_ = saved;
        return flow;
      } catch (...) {
        scope_ = saved;
        throw;
      }
    }
    case StmtKind::Scope:
      out += capture(static_cast<const ScopeStmt&>(s).body);
      check_size(out.size());
      return Flow::Normal;
    case StmtKind::Unsupported:
      fail("TypeError", static_cast<const UnsupportedStmt&>(s).message);
    default:
      break;
  }
  return Flow::Normal;
}

Value Interpreter::make_macro(const std::string& name, const std::vector<Param>& params,
                              const Body& body) {
  auto macro = std::make_shared<MacroDef>();
  macro->name = name;
  macro->params = &params;
  macro->body = &body;
  macro->closure = scope_;
  macros_.push_back(macro);
  return Value(std::shared_ptr<Object>(std::move(macro)));
}

void Interpreter::assign(const Target& t, const Value& v) {
  switch (t.kind) {
    case Target::Kind::Name:
      set_var(t.slot, Value(v));
      return;
    case Target::Kind::NsAttr: {
      NameExpr name(t.pos, t.name, t.slot);
      Value ns = lookup(name);
      auto* obj = ns.is_object() ? dynamic_cast<NamespaceObject*>(&ns.object()) : nullptr;
      if (!obj) fail("TemplateRuntimeError", "cannot assign attribute on non-namespace object");
      if (!t.attr.empty() && t.attr[0] == '_') {
        fail("SecurityError",
             "Chat templates cannot store underscore-prefixed attributes on a "
             "namespace, but got '" +
                 t.attr + "'. Please rename the attribute.");
      }
      obj->attrs.set(Value(t.attr), v);
      return;
    }
    case Target::Kind::Tuple: {
      auto items = iterate(v);
      if (items->size() != t.items.size()) {
        if (items->size() > t.items.size()) {
          fail("ValueError",
               "too many values to unpack (expected " + std::to_string(t.items.size()) + ")");
        }
        fail("ValueError", "not enough values to unpack (expected " +
                               std::to_string(t.items.size()) + ", got " +
                               std::to_string(items->size()) + ")");
      }
      for (size_t i = 0; i < items->size(); ++i) assign(t.items[i], (*items)[i]);
      return;
    }
  }
}

void Interpreter::run_for(const ForStmt& stmt, const Value& iterable, int depth, Output& out) {
  std::shared_ptr<const ValueList> items = iterate(iterable);
  auto saved = scope_;
  auto scope = std::make_shared<Scope>(saved);
  scope_ = scope;
  try {
    if (stmt.filter) {
      ValueList kept;
      for (const auto& item : *items) {
        count_steps(1);
        scope->live = 0;
        assign(stmt.target, item);
        if (truth(*stmt.filter)) kept.push_back(item);
      }
      items = std::make_shared<const ValueList>(std::move(kept));
    }
    if (items->empty()) {
      scope->live = 0;
      exec(stmt.otherwise, out);
      scope_ = saved;
      return;
    }
    auto loop = std::make_shared<LoopObject>();
    loop->items = items;
    loop->depth = depth;
    loop->stmt = &stmt;
    const Value loop_value{std::shared_ptr<Object>(loop)};
    const bool plain_target =
        stmt.target.kind == Target::Kind::Name && stmt.target.slot != loop_slot_;
    // A fresh scope per iteration: it keeps only a plain target, the names of the leading
    // member sets (ForStmt::bound) and `loop`, which are overwritten in place; whatever
    // the body set is dropped.
    const size_t bound = plain_target ? stmt.bound : 0;
    scope->live = 0;
    if (plain_target) scope->set(stmt.target.slot, Value());
    for (size_t j = 0; j < bound; ++j) {
      scope->set(static_cast<const SetStmt&>(*stmt.body[j]).target.slot, Value());
    }
    if (loop_slot_ >= 0) scope->set(loop_slot_, Value(loop_value));
    const size_t kept = scope->live;
    for (size_t i = 0; i < items->size(); ++i) {
      count_steps(1);
      loop->index0 = i;
      scope->live = kept;
      if (loop_slot_ >= 0 && scope->vars[kept - 1].second.payload() != loop.get()) {
        scope->vars[kept - 1].second = loop_value;  // the body rebound `loop`
      }
      const Value& item = (*items)[i];
      if (plain_target) {
        scope->vars[0].second = item;
        for (size_t j = 0; j < bound; ++j) {  // the member sets, as exec() would run them
          const auto& set = static_cast<const SetStmt&>(*stmt.body[j]);
          if (const std::string* s = json_member_string(item, *set.value->read.text)) {
            scope->vars[1 + j].second = Value::borrowed(*s);
          } else {
            exec_stmt(set, out);
          }
        }
      } else {
        assign(stmt.target, item);
      }
      if (exec(stmt.body, out, bound) == Flow::Break) break;
    }
  } catch (...) {
    scope_ = saved;
    throw;
  }
  scope_ = saved;
}

std::string Interpreter::run_loop(const ForStmt& stmt, const Value& iterable, int depth) {
  if (depth > settings_.limits.max_recursion_depth) {
    fail("RecursionError", "maximum recursion depth exceeded");
  }
  Output out;
  run_for(stmt, iterable, depth, out);
  return out.take();
}

Value Interpreter::call_macro(const MacroDef& macro, CallArgs& args) {
  if (depth_ >= settings_.limits.max_recursion_depth) {
    fail("RecursionError", "maximum recursion depth exceeded (more than " +
                               std::to_string(settings_.limits.max_recursion_depth) +
                               " nested macro calls)");
  }
  count_steps(1);
  const auto& params = *macro.params;
  auto saved = scope_;
  scope_ = std::make_shared<Scope>(macro.closure);
  ++depth_;
  Output out;
  try {
    std::vector<bool> bound(params.size(), false);
    ValueList varargs;
    for (size_t i = 0; i < args.positional.size(); ++i) {
      if (i < params.size()) {
        scope_->set(params[i].slot, Value(args.positional[i]));
        bound[i] = true;
      } else {
        varargs.push_back(args.positional[i]);
      }
    }
    Dict kwargs;
    for (auto& [key, value] : args.kwargs) {
      bool matched = false;
      for (size_t i = 0; i < params.size(); ++i) {
        if (params[i].name == key) {
          if (bound[i]) {
            type_error("macro '" + macro.name + "' got multiple values for argument '" + key + "'");
          }
          scope_->set(params[i].slot, Value(value));
          bound[i] = matched = true;
          break;
        }
      }
      if (matched) continue;
      if (key == "caller") {
        if (caller_slot_ >= 0) scope_->set(caller_slot_, Value(value));
      } else {
        kwargs.set(Value(key), value);
      }
    }
    for (size_t i = 0; i < params.size(); ++i) {
      if (bound[i]) continue;
      if (params[i].default_value) {
        scope_->set(params[i].slot, eval(*params[i].default_value));
      } else {
        scope_->set(params[i].slot,
                    Value::undefined_hint("parameter '" + params[i].name + "' was not provided"));
      }
    }
    if (varargs_slot_ >= 0) scope_->set(varargs_slot_, Value(std::move(varargs), ListKind::Tuple));
    if (kwargs_slot_ >= 0) scope_->set(kwargs_slot_, Value(std::move(kwargs)));
    exec(*macro.body, out);
  } catch (...) {
    --depth_;
    scope_ = saved;
    throw;
  }
  --depth_;
  scope_ = saved;
  return Value(out.take());
}

// ------------------------------------------------------------------------ expressions

}  // namespace heron::chat::jinja
