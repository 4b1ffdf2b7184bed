#pragma once
// The parsed template: expression and statement nodes, each with the line and column it
// came from so that runtime errors can point at it. Filters and tests are resolved to
// functions while parsing; names are interned to slots.
#include <atomic>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "heron/template/ops.h"
#include "heron/template/value.h"

namespace heron::chat::jinja {

struct Pos {
  int line = 0;
  int col = 0;
};

// Arguments as passed to filters, tests, methods and callables.
struct CallArgs {
  ValueList positional;
  std::vector<std::pair<std::string, Value>> kwargs;
};

using FilterFn = Value (*)(Interpreter&, const Value& input, CallArgs& args);
using TestFn = bool (*)(Interpreter&, const Value& input, CallArgs& args);

enum class ExprKind {
  Const,
  Name,
  GetAttr,
  GetItem,
  Slice,
  Call,
  Filter,
  Test,
  Not,
  Neg,
  Plus,
  Binary,
  And,
  Or,
  Concat,
  Compare,
  Cond,
  List,
  Tuple,
  Dict
};

// How a render reads the str an expression gives without evaluating it, decided once
// when the node is built (lower.cpp): a str literal, a variable, or variable['key'] /
// variable.key on a dict. `None` for every other shape. The read yields a str only
// when the value found is a plain str; anything else is evaluated in full.
struct StrRead {
  enum class Kind : uint8_t { None, Text, Var, Member };
  Kind kind = Kind::None;
  // Member: a key the dict lacks reads as undefined (it names no dict method).
  bool missing_is_undefined = false;
  int slot = -1;                      // Var, Member: the variable
  const std::string* text = nullptr;  // Text: the literal; Member: the key
};

struct Expr {
  explicit Expr(ExprKind k, Pos p) : kind(k), pos(p) {}
  virtual ~Expr() = default;
  ExprKind kind;
  Pos pos;
  StrRead read;
};
using ExprPtr = std::unique_ptr<Expr>;

struct ConstExpr : Expr {
  ConstExpr(Pos p, Value v) : Expr(ExprKind::Const, p), value(std::move(v)) {
    // The program outlives every render, so renders can use the literal without
    // touching its reference count.
    borrowed = value.is_string() ? Value::borrowed(value.str()) : value;
    if (value.is_string() && !value.is_markup())
      read = {StrRead::Kind::Text, false, -1, &value.str()};
  }
  Value value;
  Value borrowed;
};

struct NameExpr : Expr {
  NameExpr(Pos p, std::string n, int s) : Expr(ExprKind::Name, p), name(std::move(n)), slot(s) {
    read = {StrRead::Kind::Var, false, s, nullptr};
  }
  std::string name;
  int slot;
};

struct GetAttrExpr : Expr {
  GetAttrExpr(Pos p, ExprPtr o, std::string a);  // lower.cpp
  ExprPtr obj;
  std::string attr;
};

struct GetItemExpr : Expr {
  GetItemExpr(Pos p, ExprPtr o, ExprPtr k);  // lower.cpp
  ExprPtr obj, key;
};

struct SliceExpr : Expr {
  SliceExpr(Pos p, ExprPtr o) : Expr(ExprKind::Slice, p), obj(std::move(o)) {}
  ExprPtr obj, start, stop, step;  // bounds may be null
};

struct Arguments {
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  ExprPtr dyn_args, dyn_kwargs;  // *args, **kwargs
};

struct CallExpr : Expr {
  CallExpr(Pos p, ExprPtr c) : Expr(ExprKind::Call, p), callee(std::move(c)) {}
  ExprPtr callee;
  Arguments args;
};

// A filter (operand | name(args)) or test (operand is name(args)). A filter with a null
// operand applies to the body of a filter block or block set.
struct FilterExpr : Expr {
  FilterExpr(ExprKind k, Pos p, ExprPtr o, std::string n)
      : Expr(k, p), operand(std::move(o)), name(std::move(n)) {}
  ExprPtr operand;
  std::string name;
  FilterFn filter = nullptr;  // null when unknown: an error if evaluated
  TestFn test = nullptr;
  Arguments args;
};

struct UnaryExpr : Expr {
  UnaryExpr(ExprKind k, Pos p, ExprPtr o) : Expr(k, p), operand(std::move(o)) {}
  ExprPtr operand;
};

struct BinaryExpr : Expr {
  BinaryExpr(ExprKind k, Pos p, BinOp o, ExprPtr l, ExprPtr r)
      : Expr(k, p), op(o), left(std::move(l)), right(std::move(r)) {
    if (k == ExprKind::And) lower_and();
  }
  BinOp op;  // for ExprKind::Binary
  ExprPtr left, right;
  // `'key' in var and var['key']` (or var.key): its truth is var['key']'s, false when var
  // lacks the key; the read of var['key'] with a missing key reading as undefined (lower.cpp).
  // Kind None for other shapes.
  StrRead guarded;

 private:
  void lower_and();
};

struct ConcatExpr : Expr {
  explicit ConcatExpr(Pos p) : Expr(ExprKind::Concat, p) {}
  std::vector<ExprPtr> parts;
};

enum class CmpOp { Eq, Ne, Lt, Le, Gt, Ge, In, NotIn };

struct CompareExpr : Expr {
  CompareExpr(Pos p, ExprPtr f) : Expr(ExprKind::Compare, p), first(std::move(f)) {}
  // Called once the operators are parsed: lowers `x == 'str'` / `x != 'str'` (lower.cpp).
  void lower();
  ExprPtr first;
  std::vector<std::pair<CmpOp, ExprPtr>> ops;
  const std::string* literal = nullptr;  // the plain str of a lowered comparison
  bool equal = true;                     // == (else !=); for key_in: in (else not in)
  // `'key' in var` / `'key' not in var`: var (slot) and the key, looked up in var alone
  // when it is a dict; kind None for other shapes.
  StrRead key_in;
};

struct CondExpr : Expr {
  CondExpr(Pos p, ExprPtr t, ExprPtr a, ExprPtr b)
      : Expr(ExprKind::Cond, p), test(std::move(t)), then(std::move(a)), otherwise(std::move(b)) {}
  ExprPtr test, then, otherwise;  // otherwise may be null (undefined)
};

struct ListExpr : Expr {  // List or Tuple
  ListExpr(ExprKind k, Pos p) : Expr(k, p) {}
  std::vector<ExprPtr> items;
};

struct DictExpr : Expr {
  explicit DictExpr(Pos p) : Expr(ExprKind::Dict, p) {}
  std::vector<std::pair<ExprPtr, ExprPtr>> items;
};

// ----------------------------------------------------------------------------- statements

enum class StmtKind {
  Text,
  Print,
  If,
  For,
  Set,
  SetBlock,
  Macro,
  CallBlock,
  FilterBlock,
  With,
  Break,
  Continue,
  Scope,
  Unsupported
};

struct Stmt {
  Stmt(StmtKind k, Pos p) : kind(k), pos(p) {}
  virtual ~Stmt() = default;
  StmtKind kind;
  Pos pos;
};
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

// An assignment target: a name, a tuple of targets, or namespace.attr.
struct Target {
  enum class Kind { Name, Tuple, NsAttr } kind = Kind::Name;
  Pos pos;
  std::string name;
  int slot = -1;
  std::string attr;
  std::vector<Target> items;
};

struct TextStmt : Stmt {
  TextStmt(Pos p, std::string t) : Stmt(StmtKind::Text, p), text(std::move(t)) {}
  std::string text;
};

struct PrintStmt : Stmt {
  PrintStmt(Pos p, ExprPtr e);  // lower.cpp
  // Pieces alone (IfStmt::Case::print), never evaluated in full.
  PrintStmt(Pos p, std::vector<StrRead> reads)
      : Stmt(StmtKind::Print, p), pieces(std::move(reads)) {}
  ExprPtr expr;
  // `{{ 'a' + x['k'] + y }}` (a `+` or `~` chain of reads, or one read), lowered to its
  // pieces: when every piece reads as a plain str, the render appends them without
  // evaluating `expr`. Empty for other shapes.
  std::vector<StrRead> pieces;
};

struct IfStmt : Stmt {
  explicit IfStmt(Pos p) : Stmt(StmtKind::If, p) {}
  // Called once the branches are parsed: lowers a leading run of branches that compare one
  // read with str literals (lower.cpp).
  void lower();
  std::vector<std::pair<ExprPtr, Body>> branches;
  Body otherwise;
  // `if x == 'a' ... elif x == 'b' or x == 'c' ... elif x == 'd' and y`: the render reads
  // `subject` once and scans `cases`, one per literal in branch order, for the first whose
  // literal it equals and whose `rest` (the `and y`) is true. Branches from `lowered` on,
  // or a subject that does not read as a plain str, take the general path.
  struct Case {
    std::string_view literal;
    size_t branch;
    const Expr* rest;  // null: nothing more to test
    // The branch when it is one lowered print; when that prints the subject, the print
    // with the literal in the subject's place, joined with the texts around it (one of
    // case_prints). Null for other branches.
    const PrintStmt* print = nullptr;
  };
  StrRead subject;
  std::vector<Case> cases;
  size_t lowered = 0;
  std::vector<std::unique_ptr<PrintStmt>> case_prints;  // Case::print
  std::deque<std::string> case_texts;                   // their joined texts
  // `if x %}{{ x }}{% endif` (x a variable or var['key']): when x reads as a plain str the
  // if is the print (an empty str is false and prints nothing).
  bool prints_test = false;
};

struct ForStmt : Stmt {
  explicit ForStmt(Pos p) : Stmt(StmtKind::For, p) {}
  // Called once the body is parsed: finds the leading member sets (lower.cpp).
  void lower();
  Target target;
  ExprPtr iter, filter;
  bool recursive = false;
  Body body, otherwise;
  // The body's leading `{% set content = message['content'] %}`s (a member of the item
  // set to a name of its own): the loop keeps those names beside the item in its scope and
  // binds them with the item, before running the rest of the body.
  size_t bound = 0;
};

struct SetStmt : Stmt {
  explicit SetStmt(Pos p) : Stmt(StmtKind::Set, p) {}
  Target target;
  ExprPtr value;
};

struct SetBlockStmt : Stmt {
  explicit SetBlockStmt(Pos p) : Stmt(StmtKind::SetBlock, p) {}
  Target target;
  ExprPtr filter;  // FilterExpr chain with a null innermost operand, or null
  Body body;
};

struct Param {
  std::string name;
  int slot;
  ExprPtr default_value;  // may be null
};

struct MacroStmt : Stmt {
  explicit MacroStmt(Pos p) : Stmt(StmtKind::Macro, p) {}
  std::string name;
  int slot = -1;
  std::vector<Param> params;
  Body body;
};

struct CallBlockStmt : Stmt {
  explicit CallBlockStmt(Pos p) : Stmt(StmtKind::CallBlock, p) {}
  std::vector<Param> params;
  ExprPtr call;  // a CallExpr
  Body body;
};

struct FilterBlockStmt : Stmt {
  explicit FilterBlockStmt(Pos p) : Stmt(StmtKind::FilterBlock, p) {}
  ExprPtr filter;  // FilterExpr chain with a null innermost operand
  Body body;
};

struct WithStmt : Stmt {
  explicit WithStmt(Pos p) : Stmt(StmtKind::With, p) {}
  std::vector<std::pair<Target, ExprPtr>> assigns;
  Body body;
};

// A body run in its own scope: the `generation` tag, `block`.
struct ScopeStmt : Stmt {
  explicit ScopeStmt(Pos p) : Stmt(StmtKind::Scope, p) {}
  Body body;
};

// include / import / extends: templates cannot load other templates here.
struct UnsupportedStmt : Stmt {
  UnsupportedStmt(Pos p, std::string m) : Stmt(StmtKind::Unsupported, p), message(std::move(m)) {}
  std::string message;
};

// A parsed template: its body and the names it refers to, interned to slots.
struct Program {
  Program() = default;
  Program(Program&& other) noexcept
      : body(std::move(other.body)),
        names(std::move(other.names)),
        slots(std::move(other.slots)),
        initial(std::move(other.initial)),
        engine(other.engine),
        last_output_bytes(other.last_output_bytes.load(std::memory_order_relaxed)) {}
  Body body;
  std::vector<std::string> names;              // slot -> name
  std::unordered_map<std::string, int> slots;  // name -> slot
  // Per slot, what a render starts from before the context fills it in: the global of
  // that name (range, namespace, ...) or an undefined value naming it. Made once, shared
  // read-only by every render.
  std::vector<Value> initial;
  // Slots of the names the engine itself binds (-1 when the template never uses them).
  struct EngineSlots {
    int loop = -1, caller = -1, varargs = -1, kwargs = -1;
  } engine;
  // The size of the latest render's output: the next render reserves that much up front
  // instead of regrowing (and recopying) its output as it goes. Renders may run at once.
  mutable std::atomic<size_t> last_output_bytes{0};
};

}  // namespace heron::chat::jinja
