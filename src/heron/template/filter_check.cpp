// After parsing: unknown filters and tests are syntax errors, as in jinja2's compiler.
#include "heron/template/lexer.h"
#include "heron/template/parser.h"

namespace heron::chat::jinja {

namespace {

// jinja2 rejects unknown filters and tests at compile time, except inside `if` statements
// and conditional expressions, where they fail only when evaluated.
class UnknownFilterCheck {
 public:
  void body(const Body& stmts, bool soft) {
    for (const auto& s : stmts) stmt(*s, soft);
  }

 private:
  void args(const Arguments& a, bool soft) {
    for (const auto& e : a.args) expr(e.get(), soft);
    for (const auto& kv : a.kwargs) expr(kv.second.get(), soft);
    expr(a.dyn_args.get(), soft);
    expr(a.dyn_kwargs.get(), soft);
  }

  void expr(const Expr* e, bool soft) {
    if (!e) return;
    switch (e->kind) {
      case ExprKind::Filter:
      case ExprKind::Test: {
        auto& f = static_cast<const FilterExpr&>(*e);
        if (!soft && !f.filter && !f.test) {
          syntax_error(f.pos.line, f.pos.col,
                       std::string("No ") + (e->kind == ExprKind::Filter ? "filter" : "test") +
                           " named '" + f.name + "'.");
        }
        expr(f.operand.get(), soft);
        args(f.args, soft);
        return;
      }
      case ExprKind::GetAttr:
        expr(static_cast<const GetAttrExpr&>(*e).obj.get(), soft);
        return;
      case ExprKind::GetItem:
        expr(static_cast<const GetItemExpr&>(*e).obj.get(), soft);
        expr(static_cast<const GetItemExpr&>(*e).key.get(), soft);
        return;
      case ExprKind::Slice: {
        auto& s = static_cast<const SliceExpr&>(*e);
        for (const Expr* x : {s.obj.get(), s.start.get(), s.stop.get(), s.step.get()})
          expr(x, soft);
        return;
      }
      case ExprKind::Call:
        expr(static_cast<const CallExpr&>(*e).callee.get(), soft);
        args(static_cast<const CallExpr&>(*e).args, soft);
        return;
      case ExprKind::Not:
      case ExprKind::Neg:
      case ExprKind::Plus:
        expr(static_cast<const UnaryExpr&>(*e).operand.get(), soft);
        return;
      case ExprKind::Binary:
      case ExprKind::And:
      case ExprKind::Or:
        expr(static_cast<const BinaryExpr&>(*e).left.get(), soft);
        expr(static_cast<const BinaryExpr&>(*e).right.get(), soft);
        return;
      case ExprKind::Concat:
        for (const auto& x : static_cast<const ConcatExpr&>(*e).parts) expr(x.get(), soft);
        return;
      case ExprKind::Compare:
        expr(static_cast<const CompareExpr&>(*e).first.get(), soft);
        for (const auto& op : static_cast<const CompareExpr&>(*e).ops) expr(op.second.get(), soft);
        return;
      case ExprKind::Cond: {
        auto& c = static_cast<const CondExpr&>(*e);
        for (const Expr* x : {c.test.get(), c.then.get(), c.otherwise.get()}) expr(x, true);
        return;
      }
      case ExprKind::List:
      case ExprKind::Tuple:
        for (const auto& x : static_cast<const ListExpr&>(*e).items) expr(x.get(), soft);
        return;
      case ExprKind::Dict:
        for (const auto& kv : static_cast<const DictExpr&>(*e).items) {
          expr(kv.first.get(), soft);
          expr(kv.second.get(), soft);
        }
        return;
      default:
        return;
    }
  }

  void stmt(const Stmt& s, bool soft) {
    switch (s.kind) {
      case StmtKind::Print:
        expr(static_cast<const PrintStmt&>(s).expr.get(), soft);
        return;
      case StmtKind::If: {
        auto& n = static_cast<const IfStmt&>(s);
        for (const auto& [test, b] : n.branches) {
          expr(test.get(), true);
          body(b, true);
        }
        body(n.otherwise, true);
        return;
      }
      case StmtKind::For: {
        auto& n = static_cast<const ForStmt&>(s);
        expr(n.iter.get(), soft);
        expr(n.filter.get(), false);
        body(n.body, false);
        body(n.otherwise, false);
        return;
      }
      case StmtKind::Set:
        expr(static_cast<const SetStmt&>(s).value.get(), soft);
        return;
      case StmtKind::SetBlock:
        expr(static_cast<const SetBlockStmt&>(s).filter.get(), soft);
        body(static_cast<const SetBlockStmt&>(s).body, soft);
        return;
      case StmtKind::Macro:
        for (const auto& p : static_cast<const MacroStmt&>(s).params)
          expr(p.default_value.get(), false);
        body(static_cast<const MacroStmt&>(s).body, false);
        return;
      case StmtKind::CallBlock:
        expr(static_cast<const CallBlockStmt&>(s).call.get(), soft);
        body(static_cast<const CallBlockStmt&>(s).body, false);
        return;
      case StmtKind::FilterBlock:
        expr(static_cast<const FilterBlockStmt&>(s).filter.get(), soft);
        body(static_cast<const FilterBlockStmt&>(s).body, soft);
        return;
      case StmtKind::With:
        for (const auto& a : static_cast<const WithStmt&>(s).assigns) expr(a.second.get(), soft);
        body(static_cast<const WithStmt&>(s).body, false);
        return;
      case StmtKind::Scope:
        body(static_cast<const ScopeStmt&>(s).body, false);
        return;
      default:
        return;
    }
  }
};

}  // namespace

void check_filters_and_tests(const Program& program) {
  UnknownFilterCheck().body(program.body, false);
}

}  // namespace heron::chat::jinja
