#pragma once
// Walks a parsed Program and renders it. Scoping follows what jinja2 compiles to: a `for`
// body starts every iteration from a fresh scope (sets inside a loop never leak out, and
// are gone at the next iteration), `if` shares its scope, macros close over the scope they
// were defined in, top-level sets overwrite context variables. Limits on loop steps,
// recursion depth and string sizes keep hostile templates bounded.
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "heron/template/ast.h"
#include "heron/template/json_context.h"
#include "heron/template/output.h"

namespace heron::chat::jinja {

struct Limits {
  size_t max_output_bytes = size_t{64} << 20;  // also bounds every string built
  uint64_t max_steps = 2'000'000;              // loop iterations plus macro calls
  int max_recursion_depth = 200;               // nested macro calls and recursive loops
};

struct RenderSettings {
  Limits limits;
  std::optional<std::tm> now;  // what strftime_now() sees; the local time when unset
};

// Variables of one scope (a loop iteration, a macro call, a with block): the first `live`
// entries of `vars`. A loop drops an iteration's variables by lowering `live`; their
// storage stays for the next iteration's sets (a {% set %} per message in some loops).
struct Scope {
  explicit Scope(std::shared_ptr<Scope> p) : parent(std::move(p)) {}
  std::shared_ptr<Scope> parent;  // null: the template's top level
  std::vector<std::pair<int, Value>> vars;
  size_t live = 0;
  Value* find(int slot) {
    for (auto *v = vars.data(), *end = v + live; v != end; ++v) {
      if (v->first == slot) return &v->second;
    }
    return nullptr;
  }
  // The variable `slot` of this scope, added when missing (holding whatever an earlier
  // iteration left there: the caller assigns it).
  Value& var(int slot) {
    if (Value* existing = find(slot)) return *existing;
    if (live < vars.size()) {
      vars[live].first = slot;
      return vars[live++].second;
    }
    return add(slot);
  }
  Value& add(int slot);  // out of line: var() stays small enough to inline
  void set(int slot, Value&& v) { var(slot) = std::move(v); }
};

struct MacroDef;
struct Failure;

// Rethrows a Failure as the heron::Error users see, naming the template position.
[[noreturn]] void rethrow_at(const Failure& f, Pos pos);

class Interpreter {
 public:
  // `globals` holds, per name slot, the context value or Program::initial's.
  Interpreter(const Program& program, std::vector<Value> globals, const RenderSettings& settings);
  // Breaks the macro <-> scope cycles of this render (see macros_).
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;
  std::string render();

  // Services for filters, tests, methods and callables.
  Value getattr(const Value& obj, std::string_view name);
  Value getitem(const Value& obj, const Value& key);
  Value call(const Value& callee, CallArgs& args);
  Value apply_filter(std::string_view name, const Value& v, CallArgs& args);
  bool apply_test(std::string_view name, const Value& v, CallArgs& args);
  // Inline: called for every piece of text appended.
  void check_size(size_t bytes) const {
    if (bytes > settings_.limits.max_output_bytes) output_limit_exceeded();
  }
  void count_steps(uint64_t n) {
    steps_ += n;
    if (steps_ > settings_.limits.max_steps) step_limit_exceeded();
  }
  const RenderSettings& settings() const { return settings_; }

  Value call_macro(const MacroDef& macro, CallArgs& args);
  std::string run_loop(const ForStmt& stmt, const Value& iterable, int depth);

 private:
  enum class Flow { Normal, Break, Continue };

  [[noreturn]] void output_limit_exceeded() const;
  [[noreturn]] void output_limit_exceeded_at(Pos pos) const;  // the error naming `pos`
  [[noreturn]] void step_limit_exceeded() const;

  // Runs a body. Inlined everywhere (as run_for's loop body above all): a call per loop
  // iteration or branch costs more than the statements it usually runs.
  [[gnu::always_inline]] Flow exec(const Body& body, Output& out, size_t first = 0) {
    for (auto it = body.begin() + static_cast<ptrdiff_t>(first); it != body.end(); ++it) {
      const StmtPtr& s = *it;
      // Lowered prints and member sets, the usual statements of a loop body or branch,
      // run here; if-statements without exec_stmt's dispatch.
      if (s->kind == StmtKind::Print && append_pieces(static_cast<const PrintStmt&>(*s), out)) {
        continue;
      }
      if (s->kind == StmtKind::Set && set_member(static_cast<const SetStmt&>(*s))) continue;
      Flow flow = s->kind == StmtKind::If ? exec_if(static_cast<const IfStmt&>(*s), out)
                                          : exec_stmt(*s, out);
      if (flow != Flow::Normal) return flow;
    }
    return Flow::Normal;
  }
  // A branch of an if: most are one lowered print, appended without a call of exec().
  Flow exec_branch(const Body& body, Output& out) {
    if (body.size() == 1 && body[0]->kind == StmtKind::Print) {
      if (append_pieces(static_cast<const PrintStmt&>(*body[0]), out)) return Flow::Normal;
      return exec_stmt(*body[0], out);  // evaluated in full
    }
    return exec(body, out);
  }
  Flow exec_stmt(const Stmt& s, Output& out);
  // Apart from exec_stmt: the usual statement of a loop body, called from exec() without
  // exec_stmt's dispatch.
  Flow exec_if(const IfStmt& n, Output& out);
  Flow exec_block(const Stmt& s, Output& out);  // set block, macro, call, filter, with, scope
  void exec_set(const SetStmt& n);              // {% set x = ... %}
  // {% set c = message['content'] %} on a dict whose members are still JSON, the str found
  // there borrowed into the variable; false (nothing set) for any other shape or value
  // (exec_set then runs it). Never throws a Failure, so exec() runs it without exec_stmt.
  bool set_member(const SetStmt& n);
  // The plain str member `key` of `obj`, a dict whose members are still JSON; null for
  // anything else.
  static const std::string* json_member_string(const Value& obj, const std::string& key) {
    return obj.is_dict() && obj.dict().reads_json() ? obj.dict().find_string(key) : nullptr;
  }
  Value eval(const Expr& e);
  Value eval_inner(const Expr& e);
  Value eval_call(const CallExpr& e);
  // out += str(e), building `a + b + ...` and `a ~ b ~ ...` chains of strings in place.
  void append_expr(const Expr& e, Output& out);
  // Text: std::string (a value being built) or Output (the text being rendered).
  template <class Text>
  bool add_chain(const BinaryExpr& e, Text* text, Value& result);
  void eval_args(const Arguments& a, CallArgs& out);
  Value eval_filter(const FilterExpr& f, const Value* input);
  Value eval_filter_operand(const FilterExpr& f, const Value* input);
  bool compare(CmpOp op, const Value& a, const Value& b);

  Value lookup(const NameExpr& n);
  const Value& lookup_ref(int slot) {
    for (Scope* s = scope_.get(); s; s = s->parent.get()) {
      if (Value* v = s->find(slot)) return *v;
    }
    return top_[static_cast<size_t>(slot)];
  }
  Value eval_object(const Expr& e);
  // The value of e, read in place when it is a literal or a variable (no copy);
  // anything else is evaluated into `scratch`.
  const Value& operand(const Expr& e, Value& scratch);
  // The plain str (not Markup) a lowered read gives (see StrRead), read where it lies;
  // null for anything else (the caller then evaluates the expression in full).
  const std::string* read_string(const StrRead& r) {
    switch (r.kind) {
      case StrRead::Kind::Text:
        return r.text;
      case StrRead::Kind::Var: {
        const Value& v = lookup_ref(r.slot);
        return v.is_string() && !v.is_markup() ? &v.str() : nullptr;
      }
      case StrRead::Kind::Member: {
        const Value& obj = lookup_ref(r.slot);
        return obj.is_dict() ? obj.dict().find_string(*r.text) : nullptr;
      }
      case StrRead::Kind::None:
        break;
    }
    return nullptr;
  }
  // out += str(v)
  static void print(const Value& v, Output& out);
  // The value a lowered var['key'] / var.key reads when var is a dict holding the key;
  // false otherwise (the caller then evaluates the expression in full).
  bool read_item(const StrRead& r, Value& out) {
    if (r.kind != StrRead::Kind::Member) return false;
    const Value& obj = lookup_ref(r.slot);
    return obj.is_dict() && obj.dict().find(std::string_view(*r.text), out);
  }
  // bool(var['key']) / bool(var.key) on a dict whose members are still JSON, read in place
  // without making a Value; nullopt otherwise (the caller then evaluates it in full).
  std::optional<bool> member_truth(const StrRead& r) {
    if (r.kind != StrRead::Kind::Member) return std::nullopt;
    const Value& obj = lookup_ref(r.slot);
    if (!obj.is_dict() || !obj.dict().reads_json()) return std::nullopt;
    if (const ContextJson* v = obj.dict().find_json(*r.text)) return json_truth(*v);
    if (r.missing_is_undefined) return false;
    return std::nullopt;
  }
  // {{ ... }} whose lowered pieces all read as plain strs, appended as they are read and
  // the output size checked (an error naming the print); false (and nothing appended)
  // when it has no pieces or one does not read as a plain str.
  bool append_pieces(const PrintStmt& print, Output& out);
  // bool(e): if-tests (`x == 'lit'`, `not x`, `a and b`, plain reads) without a Value.
  bool truth(const Expr& e);
  static bool literal_compare(const CompareExpr& c);      // x == 'literal' or x != 'literal'
  std::optional<bool> key_in_dict(const CompareExpr& c);  // c.key_in lowered
  bool compare_literal(const CompareExpr& c);
  void assign(const Target& t, const Value& v);
  // Moved into place (a {% set %} per message in some loops).
  void set_var(int slot, Value&& v) {
    (scope_ ? scope_->var(slot) : top_[static_cast<size_t>(slot)]) = std::move(v);
  }
  void run_for(const ForStmt& stmt, const Value& iterable, int depth, Output& out);
  std::string capture(const Body& body);
  Value make_macro(const std::string& name, const std::vector<Param>& params, const Body& body);

  const Program& program_;
  std::vector<Value> top_;  // top-level variables by slot
  const RenderSettings& settings_;
  std::shared_ptr<Scope> scope_;  // null at the top level
  // Slots of the names the engine itself binds (Program::engine).
  const int loop_slot_, caller_slot_, varargs_slot_, kwargs_slot_;
  uint64_t steps_ = 0;
  int depth_ = 0;
  // Every macro this render defined. A macro holds its defining scope, which may hold the
  // macro (defined in a loop or macro body): a shared_ptr cycle that would leak each render.
  std::vector<std::weak_ptr<MacroDef>> macros_;
};

}  // namespace heron::chat::jinja
