// Lowering: the node constructors that decide, once at parse time, how a render can read
// an expression's str without evaluating it (Expr::read) and which prints are a chain of
// such reads (PrintStmt::pieces). The interpreter runs these forms and falls back to full
// evaluation of the same node whenever a read does not give a plain str.
#include <algorithm>

#include "heron/template/ast.h"
#include "heron/template/builtins.h"

namespace heron::chat::jinja {

namespace {

// x.attr on a dict is the item x['attr'] unless attr names a dict method (or is a
// dunder, which the sandbox refuses).
bool attr_is_item(const std::string& attr) {
  static const Value kDict{Dict()};
  bool unsafe = false;
  return !has_method(kDict, attr, unsafe) && attr.rfind("__", 0) != 0;
}

// Appends the reads of `e`'s pieces; false when one of them has no read.
bool add_pieces(const Expr& e, std::vector<StrRead>& pieces) {
  if (e.kind == ExprKind::Binary && static_cast<const BinaryExpr&>(e).op == BinOp::Add) {
    const auto& b = static_cast<const BinaryExpr&>(e);
    return add_pieces(*b.left, pieces) && add_pieces(*b.right, pieces);
  }
  if (e.read.kind == StrRead::Kind::None) return false;
  pieces.push_back(e.read);
  return true;
}

bool same_read(const StrRead& a, const StrRead& b) {
  return a.kind == b.kind && a.slot == b.slot &&
         (a.kind != StrRead::Kind::Member || *a.text == *b.text);
}

// Adds the literals `e` compares `subject` with (`subject == 'a'`, or an `or` of such),
// taking the first read met as the subject; false for any other shape.
bool add_literals(const Expr& e, StrRead& subject, std::vector<const std::string*>& literals) {
  if (e.kind == ExprKind::Or) {
    const auto& b = static_cast<const BinaryExpr&>(e);
    return add_literals(*b.left, subject, literals) && add_literals(*b.right, subject, literals);
  }
  if (e.kind != ExprKind::Compare) return false;
  const auto& c = static_cast<const CompareExpr&>(e);
  const StrRead& read = c.first->read;
  if (!c.literal || !c.equal || read.kind == StrRead::Kind::None ||
      read.kind == StrRead::Kind::Text) {
    return false;
  }
  if (subject.kind == StrRead::Kind::None) subject = read;
  if (!same_read(subject, read)) return false;
  literals.push_back(c.literal);
  return true;
}

}  // namespace

GetAttrExpr::GetAttrExpr(Pos p, ExprPtr o, std::string a)
    : Expr(ExprKind::GetAttr, p), obj(std::move(o)), attr(std::move(a)) {
  if (obj->kind == ExprKind::Name && attr_is_item(attr)) {
    read = {StrRead::Kind::Member, true, obj->read.slot, &attr};
  }
}

GetItemExpr::GetItemExpr(Pos p, ExprPtr o, ExprPtr k)
    : Expr(ExprKind::GetItem, p), obj(std::move(o)), key(std::move(k)) {
  if (obj->kind == ExprKind::Name && key->read.kind == StrRead::Kind::Text) {
    read = {StrRead::Kind::Member, attr_is_item(*key->read.text), obj->read.slot, key->read.text};
  }
}

// A dict holding the key gives True and var['key'], so the truth of var['key']; one
// lacking it gives False, as a missing key read as undefined does.
void BinaryExpr::lower_and() {
  if (left->kind != ExprKind::Compare) return;
  const auto& c = static_cast<const CompareExpr&>(*left);
  const StrRead& r = right->read;
  if (c.key_in.kind == StrRead::Kind::Member && c.equal && r.kind == StrRead::Kind::Member &&
      r.slot == c.key_in.slot && *r.text == *c.key_in.text) {
    guarded = r;
    guarded.missing_is_undefined = true;
  }
}

// `x == 'str'`: when x reads as a plain str, the comparison is a string comparison.
void CompareExpr::lower() {
  if (ops.size() != 1) return;
  if ((ops[0].first == CmpOp::In || ops[0].first == CmpOp::NotIn) &&
      first->read.kind == StrRead::Kind::Text && ops[0].second->kind == ExprKind::Name) {
    key_in = {StrRead::Kind::Member, false, ops[0].second->read.slot, first->read.text};
    equal = ops[0].first == CmpOp::In;
    return;
  }
  if (ops[0].second->read.kind != StrRead::Kind::Text) return;
  if (ops[0].first != CmpOp::Eq && ops[0].first != CmpOp::Ne) return;
  literal = ops[0].second->read.text;
  equal = ops[0].first == CmpOp::Eq;
}

// Reading the subject once is the same as reading it per test: a read has no side
// effects and the values it reads (context data, variables) cannot change within a test.
void IfStmt::lower() {
  for (const auto& [test, body] : branches) {
    const Expr* compared = test.get();
    const Expr* rest = nullptr;
    if (test->kind == ExprKind::And) {
      const auto& b = static_cast<const BinaryExpr&>(*test);
      compared = b.left.get();
      rest = b.right.get();
    }
    StrRead s = subject;
    std::vector<const std::string*> literals;
    if (!add_literals(*compared, s, literals)) break;
    subject = s;
    for (size_t i = 0; i < literals.size(); ++i) {
      // A literal repeated in one test would test its `rest` twice.
      bool repeated = false;
      for (size_t j = 0; j < i; ++j) repeated = repeated || *literals[j] == *literals[i];
      if (!repeated) cases.push_back({*literals[i], lowered, rest});
    }
    ++lowered;
  }
  // A case whose branch is one print appends it from the case loop; a case knows its
  // subject's text, so a print of the subject there is a print of the literal.
  for (Case& c : cases) {
    const Body& body = branches[c.branch].second;
    if (body.size() != 1 || body[0]->kind != StmtKind::Print) continue;
    const auto& print = static_cast<const PrintStmt&>(*body[0]);
    if (print.pieces.empty()) continue;
    c.print = &print;
    const auto is_subject = [&](const StrRead& piece) { return same_read(piece, subject); };
    if (std::none_of(print.pieces.begin(), print.pieces.end(), is_subject)) continue;
    std::vector<StrRead> pieces;
    for (const StrRead& piece : print.pieces) {
      const bool subject_piece = is_subject(piece);
      if (!subject_piece && piece.kind != StrRead::Kind::Text) {
        pieces.push_back(piece);
        continue;
      }
      const std::string_view text = subject_piece ? c.literal : std::string_view(*piece.text);
      if (!pieces.empty() && pieces.back().kind == StrRead::Kind::Text &&
          pieces.back().text == &case_texts.back()) {
        case_texts.back() += text;
      } else {
        pieces.push_back({StrRead::Kind::Text, false, -1, &case_texts.emplace_back(text)});
      }
    }
    c.print =
        case_prints.emplace_back(std::make_unique<PrintStmt>(print.pos, std::move(pieces))).get();
  }
  if (branches.size() == 1 && otherwise.empty() && branches[0].second.size() == 1 &&
      branches[0].second[0]->kind == StmtKind::Print) {
    const StrRead& test = branches[0].first->read;
    const auto& print = static_cast<const PrintStmt&>(*branches[0].second[0]);
    prints_test = (test.kind == StrRead::Kind::Var || test.kind == StrRead::Kind::Member) &&
                  print.pieces.size() == 1 && same_read(print.pieces[0], test);
  }
}

// The sets are the body's first statements, so binding them with the item runs them in
// the same order; each name is the item's or another set's at most once, never `loop`
// (which the loop binds itself).
void ForStmt::lower() {
  if (target.kind != Target::Kind::Name || target.name == "loop") return;
  std::vector<int> names{target.slot};
  for (const auto& s : body) {
    if (s->kind != StmtKind::Set) break;
    const auto& set = static_cast<const SetStmt&>(*s);
    const StrRead& r = set.value->read;
    if (set.target.kind != Target::Kind::Name || set.target.name == "loop" ||
        r.kind != StrRead::Kind::Member || r.slot != target.slot ||
        std::find(names.begin(), names.end(), set.target.slot) != names.end()) {
      break;
    }
    names.push_back(set.target.slot);
    ++bound;
  }
}

// A `+` chain of plain strs is their concatenation and `~` of plain strs too, so both
// lower to the list of their pieces.
PrintStmt::PrintStmt(Pos p, ExprPtr e) : Stmt(StmtKind::Print, p), expr(std::move(e)) {
  bool lowered;
  if (expr->kind == ExprKind::Concat) {
    lowered = true;
    for (const auto& part : static_cast<const ConcatExpr&>(*expr).parts) {
      lowered = lowered && add_pieces(*part, pieces);
    }
  } else {
    lowered = add_pieces(*expr, pieces);
  }
  if (!lowered) pieces.clear();
}

}  // namespace heron::chat::jinja
