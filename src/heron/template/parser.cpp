#include "heron/template/parser.h"

#include <algorithm>
#include <unordered_map>

#include "heron/template/builtins.h"
#include "heron/template/lexer.h"
#include "heron/template/pystr.h"

namespace heron::chat::jinja {

namespace {

// Deeply nested expressions would exhaust the C++ stack; jinja2 has Python's limit.
constexpr int kMaxNesting = 200;

std::string describe(const Token& t) {
  switch (t.type) {
    case Tok::Name:
    case Tok::Op:
      return t.text;
    case Tok::String:
      return "string";
    case Tok::Int:
      return "integer";
    case Tok::Float:
      return "float";
    case Tok::VarBegin:
      return "begin of print statement";
    case Tok::VarEnd:
      return "end of print statement";
    case Tok::BlockBegin:
      return "begin of statement block";
    case Tok::BlockEnd:
      return "end of statement block";
    case Tok::Data:
      return "template data / text";
    case Tok::Eof:
      return "end of template";
  }
  return "?";
}

class Parser {
 public:
  explicit Parser(const std::string& source) : toks_(tokenize(source)) {}

  Program run() {
    prog_.body = subparse({});
    return std::move(prog_);
  }

 private:
  std::vector<Token> toks_;
  size_t i_ = 0;
  Program prog_;
  std::vector<std::string> tag_stack_;
  std::vector<std::vector<std::string>> end_stack_;
  int depth_ = 0;

  // ------------------------------------------------------------------ token stream
  const Token& cur() const { return toks_[i_]; }
  const Token& look() const { return toks_[std::min(i_ + 1, toks_.size() - 1)]; }
  Pos pos() const { return {cur().line, cur().col}; }
  const Token& advance() {
    const Token& t = toks_[i_];
    if (i_ + 1 < toks_.size()) ++i_;
    return t;
  }
  bool is_op(const char* op) const { return cur().type == Tok::Op && cur().text == op; }
  bool is_name(const char* name) const { return cur().type == Tok::Name && cur().text == name; }
  bool skip_op(const char* op) {
    if (!is_op(op)) return false;
    advance();
    return true;
  }
  bool skip_name(const char* name) {
    if (!is_name(name)) return false;
    advance();
    return true;
  }

  [[noreturn]] void fail(const std::string& message) { fail_at(pos(), message); }
  [[noreturn]] void fail_at(Pos p, const std::string& message) {
    syntax_error(p.line, p.col, message);
  }
  [[noreturn]] void fail_expected(const std::string& what) {
    if (cur().type == Tok::Eof) fail("unexpected end of template, expected '" + what + "'.");
    fail("expected token '" + what + "', got '" + describe(cur()) + "'");
  }
  const Token& expect_op(const char* op) {
    if (!is_op(op)) fail_expected(op);
    return advance();
  }
  const Token& expect_name() {
    if (cur().type != Tok::Name) fail_expected("name");
    return advance();
  }
  void expect_name(const char* name) {
    if (!is_name(name)) fail_expected(name);
    advance();
  }
  void expect(Tok type) {
    if (cur().type != type) {
      Token want{type, ""};
      fail_expected(describe(want));
    }
    advance();
  }

  int slot(const std::string& name) {
    auto [it, inserted] = prog_.slots.emplace(name, static_cast<int>(prog_.names.size()));
    if (inserted) prog_.names.push_back(name);
    return it->second;
  }

  // ------------------------------------------------------------------ statements
  bool at_end_token(const std::vector<std::string>& ends) const {
    if (cur().type != Tok::Name) return false;
    return std::find(ends.begin(), ends.end(), cur().text) != ends.end();
  }

  // Text right after text (template data, printed str literals) joins it: one statement.
  static void add_text(Body& body, Pos p, const std::string& text) {
    if (!body.empty() && body.back()->kind == StmtKind::Text) {
      static_cast<TextStmt&>(*body.back()).text += text;
    } else {
      body.push_back(std::make_unique<TextStmt>(p, text));
    }
  }

  Body subparse(const std::vector<std::string>& ends) {
    Body body;
    if (!ends.empty()) end_stack_.push_back(ends);
    while (cur().type != Tok::Eof) {
      const Token& t = cur();
      if (t.type == Tok::Data) {
        add_text(body, Pos{t.line, t.col}, t.text);
        advance();
      } else if (t.type == Tok::VarBegin) {
        advance();
        Pos p = pos();
        ExprPtr e = parse_tuple(false, true, {}, false);
        if (e->read.kind == StrRead::Kind::Text) {  // {{ '<|im_end|>' }} prints its text
          add_text(body, p, *e->read.text);
        } else {
          body.push_back(std::make_unique<PrintStmt>(p, std::move(e)));
        }
        expect(Tok::VarEnd);
      } else if (t.type == Tok::BlockBegin) {
        advance();
        if (!ends.empty() && at_end_token(ends)) {
          end_stack_.pop_back();
          return body;
        }
        parse_statement(body);
        expect(Tok::BlockEnd);
      } else {
        fail("internal parsing error");
      }
    }
    if (!ends.empty()) end_stack_.pop_back();
    return body;
  }

  [[noreturn]] void fail_unknown(const std::string* name, Pos p) {
    std::vector<std::string> expected;
    for (const auto& ends : end_stack_) expected.insert(expected.end(), ends.begin(), ends.end());
    std::string message =
        name ? "Encountered unknown tag '" + *name + "'." : "Unexpected end of template.";
    if (!end_stack_.empty()) {
      std::string looking;
      for (const auto& e : end_stack_.back()) {
        looking += (looking.empty() ? "'" : " or '") + e + "'";
      }
      if (name && std::find(expected.begin(), expected.end(), *name) != expected.end()) {
        message +=
            " You probably made a nesting mistake. Jinja is expecting this tag, but "
            "currently looking for " +
            looking + ".";
      } else {
        message += " Jinja was looking for the following tags: " + looking + ".";
      }
    }
    if (!tag_stack_.empty()) {
      message += " The innermost block that needs to be closed is '" + tag_stack_.back() + "'.";
    }
    fail_at(p, message);
  }

  Body parse_statements(const std::vector<std::string>& ends, bool drop_needle) {
    skip_op(":");
    expect(Tok::BlockEnd);
    Body body = subparse(ends);
    if (cur().type == Tok::Eof) {
      end_stack_.push_back(ends);
      fail_unknown(nullptr, pos());
    }
    if (drop_needle) advance();
    return body;
  }

  void parse_statement(Body& out) {
    if (cur().type != Tok::Name) fail("tag name expected");
    const std::string tag = cur().text;
    const Pos p = pos();
    tag_stack_.push_back(tag);
    if (tag == "for") {
      out.push_back(parse_for());
    } else if (tag == "if") {
      out.push_back(parse_if());
    } else if (tag == "set") {
      out.push_back(parse_set());
    } else if (tag == "macro") {
      out.push_back(parse_macro());
    } else if (tag == "call") {
      out.push_back(parse_call_block());
    } else if (tag == "filter") {
      advance();
      auto node = std::make_unique<FilterBlockStmt>(p);
      node->filter = parse_filter(nullptr, true);
      node->body = parse_statements({"endfilter"}, true);
      out.push_back(std::move(node));
    } else if (tag == "with") {
      out.push_back(parse_with());
    } else if (tag == "print") {
      advance();
      bool first = true;
      while (cur().type != Tok::BlockEnd) {
        if (!first) expect_op(",");
        first = false;
        Pos ep = pos();
        out.push_back(std::make_unique<PrintStmt>(ep, parse_expression(true)));
      }
    } else if (tag == "break" || tag == "continue") {
      advance();
      out.push_back(
          std::make_unique<Stmt>(tag == "break" ? StmtKind::Break : StmtKind::Continue, p));
    } else if (tag == "generation" || tag == "block" || tag == "autoescape") {
      advance();
      auto node = std::make_unique<ScopeStmt>(p);
      if (tag == "block") {
        std::string name = expect_name().text;
        skip_name("scoped");
        skip_name("required");
        node->body = parse_statements({"endblock"}, true);
        if (is_name(name.c_str())) advance();
      } else {
        if (tag == "autoescape") parse_expression(true);
        node->body = parse_statements({"end" + tag}, true);
      }
      out.push_back(std::move(node));
    } else if (tag == "include" || tag == "import" || tag == "from" || tag == "extends") {
      advance();
      while (cur().type != Tok::BlockEnd && cur().type != Tok::Eof) advance();
      out.push_back(std::make_unique<UnsupportedStmt>(
          p, "chat templates cannot " + tag + " other templates (no loader)"));
    } else {
      tag_stack_.pop_back();
      fail_unknown(&tag, p);
    }
    tag_stack_.pop_back();
  }

  StmtPtr parse_for() {
    auto node = std::make_unique<ForStmt>(pos());
    advance();
    node->target = parse_assign_target(true, false, {"in"});
    expect_name("in");
    node->iter = parse_tuple(false, false, {"recursive"}, false);
    if (skip_name("if")) node->filter = parse_expression(true);
    node->recursive = skip_name("recursive");
    node->body = parse_statements({"endfor", "else"}, false);
    if (advance().text != "endfor") node->otherwise = parse_statements({"endfor"}, true);
    node->lower();
    return node;
  }

  StmtPtr parse_if() {
    auto node = std::make_unique<IfStmt>(pos());
    advance();
    while (true) {
      ExprPtr test = parse_tuple(false, false, {}, false);
      Body body = parse_statements({"elif", "else", "endif"}, false);
      node->branches.emplace_back(std::move(test), std::move(body));
      const std::string which = advance().text;
      if (which == "elif") continue;
      if (which == "else") node->otherwise = parse_statements({"endif"}, true);
      break;
    }
    // `if a ... else` holding only `if b ... endif` is `if a ... elif b ...`: one chain,
    // which lower() can then read once.
    if (node->otherwise.size() == 1 && node->otherwise[0]->kind == StmtKind::If) {
      const StmtPtr nested = std::move(node->otherwise[0]);
      auto& inner = static_cast<IfStmt&>(*nested);
      for (auto& branch : inner.branches) node->branches.push_back(std::move(branch));
      node->otherwise = std::move(inner.otherwise);
    }
    node->lower();
    return node;
  }

  StmtPtr parse_set() {
    const Pos p = pos();
    advance();
    Target target = parse_assign_target(true, true, {});
    if (skip_op("=")) {
      auto node = std::make_unique<SetStmt>(p);
      node->target = std::move(target);
      node->value = parse_tuple(false, true, {}, false);
      return node;
    }
    auto node = std::make_unique<SetBlockStmt>(p);
    node->target = std::move(target);
    node->filter = parse_filter(nullptr, false);
    node->body = parse_statements({"endset"}, true);
    return node;
  }

  std::vector<Param> parse_signature() {
    std::vector<Param> params;
    expect_op("(");
    while (!is_op(")")) {
      if (!params.empty()) expect_op(",");
      const Token& name = expect_name();
      Param param{name.text, slot(name.text), nullptr};
      if (skip_op("=")) {
        param.default_value = parse_expression(true);
      } else if (!params.empty() && params.back().default_value) {
        fail("non-default argument follows default argument");
      }
      params.push_back(std::move(param));
    }
    expect_op(")");
    return params;
  }

  StmtPtr parse_macro() {
    auto node = std::make_unique<MacroStmt>(pos());
    advance();
    node->name = expect_name().text;
    node->slot = slot(node->name);
    node->params = parse_signature();
    node->body = parse_statements({"endmacro"}, true);
    return node;
  }

  StmtPtr parse_call_block() {
    auto node = std::make_unique<CallBlockStmt>(pos());
    advance();
    if (is_op("(")) node->params = parse_signature();
    const Pos p = pos();
    node->call = parse_expression(true);
    if (node->call->kind != ExprKind::Call) fail_at(p, "expected call");
    node->body = parse_statements({"endcall"}, true);
    return node;
  }

  StmtPtr parse_with() {
    auto node = std::make_unique<WithStmt>(pos());
    advance();
    while (cur().type != Tok::BlockEnd) {
      if (!node->assigns.empty()) expect_op(",");
      Target target = parse_assign_target(true, false, {});
      expect_op("=");
      node->assigns.emplace_back(std::move(target), parse_expression(true));
    }
    node->body = parse_statements({"endwith"}, true);
    return node;
  }

  Target to_target(ExprPtr& e) {
    Target t;
    t.pos = e->pos;
    if (e->kind == ExprKind::Name) {
      auto& n = static_cast<NameExpr&>(*e);
      t.kind = Target::Kind::Name;
      t.name = n.name;
      t.slot = n.slot;
      return t;
    }
    if (e->kind == ExprKind::GetAttr) {  // namespace reference, built by parse_primary
      auto& g = static_cast<GetAttrExpr&>(*e);
      auto& n = static_cast<NameExpr&>(*g.obj);
      t.kind = Target::Kind::NsAttr;
      t.name = n.name;
      t.slot = n.slot;
      t.attr = g.attr;
      return t;
    }
    if (e->kind == ExprKind::Tuple) {
      t.kind = Target::Kind::Tuple;
      for (auto& item : static_cast<ListExpr&>(*e).items) t.items.push_back(to_target(item));
      return t;
    }
    fail_at(e->pos,
            e->kind == ExprKind::Const ? "can't assign to 'const'" : "can't assign to expression");
  }

  Target parse_assign_target(bool with_tuple, bool with_namespace,
                             const std::vector<std::string>& extra_end) {
    ExprPtr e = with_tuple ? parse_tuple(true, true, extra_end, false, with_namespace)
                           : parse_primary(with_namespace);
    return to_target(e);
  }

  // ------------------------------------------------------------------ expressions
  struct Nest {
    Parser& p;
    explicit Nest(Parser& parser) : p(parser) {
      if (++p.depth_ > kMaxNesting) p.fail("expression nested too deeply");
    }
    ~Nest() { --p.depth_; }
  };

  ExprPtr parse_expression(bool with_condexpr) {
    return with_condexpr ? parse_condexpr() : parse_or();
  }

  ExprPtr parse_condexpr() {
    Nest nest(*this);
    Pos p = pos();
    ExprPtr expr1 = parse_or();
    while (skip_name("if")) {
      ExprPtr expr2 = parse_or();
      ExprPtr expr3 = skip_name("else") ? parse_condexpr() : nullptr;
      expr1 = std::make_unique<CondExpr>(p, std::move(expr2), std::move(expr1), std::move(expr3));
      p = pos();
    }
    return expr1;
  }

  ExprPtr parse_or() {
    ExprPtr left = parse_and();
    while (is_name("or")) {
      Pos p = pos();
      advance();
      left =
          std::make_unique<BinaryExpr>(ExprKind::Or, p, BinOp::Add, std::move(left), parse_and());
    }
    return left;
  }

  ExprPtr parse_and() {
    ExprPtr left = parse_not();
    while (is_name("and")) {
      Pos p = pos();
      advance();
      left =
          std::make_unique<BinaryExpr>(ExprKind::And, p, BinOp::Add, std::move(left), parse_not());
    }
    return left;
  }

  ExprPtr parse_not() {
    if (is_name("not")) {
      Nest nest(*this);
      Pos p = pos();
      advance();
      return std::make_unique<UnaryExpr>(ExprKind::Not, p, parse_not());
    }
    return parse_compare();
  }

  ExprPtr parse_compare() {
    Pos p = pos();
    ExprPtr expr = parse_math1();
    std::unique_ptr<CompareExpr> cmp;
    while (true) {
      CmpOp op;
      if (is_op("==")) {
        op = CmpOp::Eq;
      } else if (is_op("!=")) {
        op = CmpOp::Ne;
      } else if (is_op("<")) {
        op = CmpOp::Lt;
      } else if (is_op("<=")) {
        op = CmpOp::Le;
      } else if (is_op(">")) {
        op = CmpOp::Gt;
      } else if (is_op(">=")) {
        op = CmpOp::Ge;
      } else if (is_name("in")) {
        op = CmpOp::In;
      } else if (is_name("not") && look().type == Tok::Name && look().text == "in") {
        advance();
        op = CmpOp::NotIn;
      } else {
        break;
      }
      advance();
      if (!cmp) cmp = std::make_unique<CompareExpr>(p, std::move(expr));
      cmp->ops.emplace_back(op, parse_math1());
    }
    if (!cmp) return expr;
    cmp->lower();
    return cmp;
  }

  ExprPtr parse_math1() {
    ExprPtr left = parse_concat();
    while (is_op("+") || is_op("-")) {
      Pos p = pos();
      BinOp op = advance().text == "+" ? BinOp::Add : BinOp::Sub;
      ExprPtr right = parse_concat();
      if (op == BinOp::Add && fold_literal(left, *right)) continue;
      left =
          std::make_unique<BinaryExpr>(ExprKind::Binary, p, op, std::move(left), std::move(right));
    }
    return left;
  }

  // `... + 'a' + 'b'` becomes `... + 'ab'`: str + str cannot fail, and whatever the left
  // side is, adding 'a' then 'b' gives what adding 'ab' does (or the same TypeError).
  // Renders then append one piece instead of two.
  static bool fold_literal(ExprPtr& left, const Expr& right) {
    const std::string* tail = literal_str(right);
    if (!tail) return false;
    ExprPtr* slot = &left;
    if (left->kind == ExprKind::Binary && static_cast<BinaryExpr&>(*left).op == BinOp::Add) {
      slot = &static_cast<BinaryExpr&>(*left).right;
    }
    const std::string* head = literal_str(**slot);
    if (!head) return false;
    *slot = std::make_unique<ConstExpr>((*slot)->pos, Value(*head + *tail));
    return true;
  }

  static const std::string* literal_str(const Expr& e) {
    if (e.kind != ExprKind::Const) return nullptr;
    const Value& v = static_cast<const ConstExpr&>(e).value;
    return v.is_string() && !v.is_markup() ? &v.str() : nullptr;
  }

  ExprPtr parse_concat() {
    Pos p = pos();
    ExprPtr first = parse_math2();
    if (!is_op("~")) return first;
    auto node = std::make_unique<ConcatExpr>(p);
    node->parts.push_back(std::move(first));
    while (skip_op("~")) node->parts.push_back(parse_math2());
    return node;
  }

  ExprPtr parse_math2() {
    ExprPtr left = parse_pow();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      Pos p = pos();
      const std::string& t = advance().text;
      BinOp op = t == "*"    ? BinOp::Mul
                 : t == "/"  ? BinOp::Div
                 : t == "//" ? BinOp::FloorDiv
                             : BinOp::Mod;
      left = std::make_unique<BinaryExpr>(ExprKind::Binary, p, op, std::move(left), parse_pow());
    }
    return left;
  }

  ExprPtr parse_pow() {
    ExprPtr left = parse_unary(true);
    while (is_op("**")) {
      Pos p = pos();
      advance();
      left = std::make_unique<BinaryExpr>(ExprKind::Binary, p, BinOp::Pow, std::move(left),
                                          parse_unary(true));
    }
    return left;
  }

  ExprPtr parse_unary(bool with_filter) {
    Nest nest(*this);
    Pos p = pos();
    ExprPtr node;
    if (skip_op("-")) {
      node = std::make_unique<UnaryExpr>(ExprKind::Neg, p, parse_unary(false));
    } else if (skip_op("+")) {
      node = std::make_unique<UnaryExpr>(ExprKind::Plus, p, parse_unary(false));
    } else {
      node = parse_primary(false);
    }
    node = parse_postfix(std::move(node));
    if (with_filter) node = parse_filter_expr(std::move(node));
    return node;
  }

  ExprPtr parse_primary(bool with_namespace) {
    Nest nest(*this);
    const Token& t = cur();
    const Pos p = pos();
    switch (t.type) {
      case Tok::Name: {
        const std::string name = t.text;
        advance();
        if (name == "true" || name == "True") return std::make_unique<ConstExpr>(p, Value(true));
        if (name == "false" || name == "False") return std::make_unique<ConstExpr>(p, Value(false));
        if (name == "none" || name == "None") return std::make_unique<ConstExpr>(p, Value::none());
        auto n = std::make_unique<NameExpr>(p, name, slot(name));
        if (with_namespace && is_op(".")) {
          advance();
          const Token& attr = expect_name();
          return std::make_unique<GetAttrExpr>(p, std::move(n), attr.text);
        }
        return n;
      }
      case Tok::String: {
        std::string text;
        while (cur().type == Tok::String) text += advance().text;
        return std::make_unique<ConstExpr>(p, Value(std::move(text)));
      }
      case Tok::Int:
        return std::make_unique<ConstExpr>(p, Value(advance().int_value));
      case Tok::Float:
        return std::make_unique<ConstExpr>(p, Value(advance().float_value));
      case Tok::Op:
        if (t.text == "(") {
          advance();
          ExprPtr e = parse_tuple(false, true, {}, true);
          expect_op(")");
          return e;
        }
        if (t.text == "[") return parse_list();
        if (t.text == "{") return parse_dict();
        break;
      default:
        break;
    }
    if (t.type == Tok::Eof || t.type == Tok::VarEnd || t.type == Tok::BlockEnd) {
      fail("unexpected '" + describe(t) + "'");
    }
    fail("unexpected '" + describe(t) + "'");
  }

  bool is_tuple_end(const std::vector<std::string>& extra_end) const {
    if (cur().type == Tok::VarEnd || cur().type == Tok::BlockEnd || is_op(")")) return true;
    return at_end_token(extra_end);
  }

  ExprPtr parse_tuple(bool simplified, bool with_condexpr,
                      const std::vector<std::string>& extra_end, bool explicit_parentheses,
                      bool with_namespace = false) {
    const Pos p = pos();
    std::vector<ExprPtr> args;
    bool is_tuple = false;
    while (true) {
      if (!args.empty()) expect_op(",");
      if (is_tuple_end(extra_end)) break;
      args.push_back(simplified ? parse_primary(with_namespace) : parse_expression(with_condexpr));
      if (is_op(",")) {
        is_tuple = true;
      } else {
        break;
      }
    }
    if (!is_tuple) {
      if (!args.empty()) return std::move(args[0]);
      if (!explicit_parentheses) fail("Expected an expression, got '" + describe(cur()) + "'");
    }
    auto node = std::make_unique<ListExpr>(ExprKind::Tuple, p);
    node->items = std::move(args);
    return node;
  }

  ExprPtr parse_list() {
    auto node = std::make_unique<ListExpr>(ExprKind::List, pos());
    expect_op("[");
    while (!is_op("]")) {
      if (!node->items.empty()) expect_op(",");
      if (is_op("]")) break;
      node->items.push_back(parse_expression(true));
    }
    expect_op("]");
    return node;
  }

  ExprPtr parse_dict() {
    auto node = std::make_unique<DictExpr>(pos());
    expect_op("{");
    while (!is_op("}")) {
      if (!node->items.empty()) expect_op(",");
      if (is_op("}")) break;
      ExprPtr key = parse_expression(true);
      expect_op(":");
      node->items.emplace_back(std::move(key), parse_expression(true));
    }
    expect_op("}");
    return node;
  }

  ExprPtr parse_postfix(ExprPtr node) {
    while (true) {
      if (is_op(".") || is_op("[")) {
        node = parse_subscript(std::move(node));
      } else if (is_op("(")) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
    }
  }

  ExprPtr parse_filter_expr(ExprPtr node) {
    while (true) {
      if (is_op("|")) {
        node = parse_filter(std::move(node), false);
      } else if (is_name("is")) {
        node = parse_test(std::move(node));
      } else if (is_op("(")) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
    }
  }

  // Subscripts and calls are located where their object starts: `foo.bar` fails at foo.
  ExprPtr parse_subscript(ExprPtr node) {
    Nest nest(*this);
    const Pos p = node->pos;
    if (advance().text == ".") {
      const Token& t = cur();
      if (t.type == Tok::Name) {
        advance();
        return std::make_unique<GetAttrExpr>(p, std::move(node), t.text);
      }
      if (t.type != Tok::Int) fail("expected name or number");
      advance();
      return std::make_unique<GetItemExpr>(p, std::move(node),
                                           std::make_unique<ConstExpr>(p, Value(t.int_value)));
    }
    std::vector<ExprPtr> args;
    while (!is_op("]")) {
      if (!args.empty()) expect_op(",");
      args.push_back(parse_subscribed());
    }
    expect_op("]");
    if (args.size() == 1) {
      if (args[0]->kind == ExprKind::Slice) {
        auto& s = static_cast<SliceExpr&>(*args[0]);
        s.obj = std::move(node);
        s.pos = p;
        return std::move(args[0]);
      }
      return std::make_unique<GetItemExpr>(p, std::move(node), std::move(args[0]));
    }
    // jinja2 fails to compile `s[1:, 2]` too (Python's SyntaxError); a slice inside a
    // tuple key would otherwise be evaluated without the object it slices.
    for (const auto& a : args) {
      if (a->kind == ExprKind::Slice)
        fail_at(p, "invalid syntax: a slice inside a tuple subscript");
    }
    auto key = std::make_unique<ListExpr>(ExprKind::Tuple, p);
    key->items = std::move(args);
    return std::make_unique<GetItemExpr>(p, std::move(node), std::move(key));
  }

  ExprPtr parse_subscribed() {
    const Pos p = pos();
    ExprPtr start;
    if (!skip_op(":")) {
      ExprPtr e = parse_expression(true);
      if (!is_op(":")) return e;
      advance();
      start = std::move(e);
    }
    auto s = std::make_unique<SliceExpr>(p, nullptr);
    s->start = std::move(start);
    if (!is_op(":") && !is_op("]") && !is_op(",")) s->stop = parse_expression(true);
    if (skip_op(":")) {
      if (!is_op("]") && !is_op(",")) s->step = parse_expression(true);
    }
    return s;
  }

  Arguments parse_call_args() {
    Arguments out;
    const Pos p = pos();
    expect_op("(");
    bool require_comma = false;
    auto ensure = [&](bool ok) {
      if (!ok) fail_at(p, "invalid syntax for function call expression");
    };
    while (!is_op(")")) {
      if (require_comma) {
        expect_op(",");
        if (is_op(")")) break;
      }
      if (skip_op("*")) {
        ensure(!out.dyn_args && !out.dyn_kwargs);
        out.dyn_args = parse_expression(true);
      } else if (skip_op("**")) {
        ensure(!out.dyn_kwargs);
        out.dyn_kwargs = parse_expression(true);
      } else if (cur().type == Tok::Name && look().type == Tok::Op && look().text == "=") {
        ensure(!out.dyn_kwargs);
        std::string key = advance().text;
        advance();
        out.kwargs.emplace_back(std::move(key), parse_expression(true));
      } else {
        ensure(!out.dyn_args && !out.dyn_kwargs && out.kwargs.empty());
        out.args.push_back(parse_expression(true));
      }
      require_comma = true;
    }
    expect_op(")");
    return out;
  }

  ExprPtr parse_call(ExprPtr node) {
    Nest nest(*this);
    const Pos p = node->pos;
    auto call = std::make_unique<CallExpr>(p, std::move(node));
    call->args = parse_call_args();
    return call;
  }

  std::string dotted_name() {
    std::string name = expect_name().text;
    while (skip_op(".")) name += "." + expect_name().text;
    return name;
  }

  ExprPtr parse_filter(ExprPtr node, bool start_inline) {
    while (is_op("|") || start_inline) {
      Nest nest(*this);
      if (!start_inline) advance();
      start_inline = false;
      const Pos p = pos();
      auto f = std::make_unique<FilterExpr>(ExprKind::Filter, p, std::move(node), dotted_name());
      f->filter = find_filter(f->name);
      if (is_op("(")) f->args = parse_call_args();
      node = std::move(f);
    }
    return node;
  }

  ExprPtr parse_test(ExprPtr node) {
    Nest nest(*this);
    const Pos p = pos();
    advance();  // "is"
    const bool negated = skip_name("not");
    auto t = std::make_unique<FilterExpr>(ExprKind::Test, p, std::move(node), dotted_name());
    t->test = find_test(t->name);
    const Token& c = cur();
    const bool arg_start = c.type == Tok::Name || c.type == Tok::String || c.type == Tok::Int ||
                           c.type == Tok::Float ||
                           (c.type == Tok::Op && (c.text == "[" || c.text == "{"));
    if (is_op("(")) {
      t->args = parse_call_args();
    } else if (arg_start && !is_name("else") && !is_name("or") && !is_name("and")) {
      if (is_name("is")) fail("You cannot chain multiple tests with is");
      t->args.args.push_back(parse_postfix(parse_primary(false)));
    }
    if (negated) return std::make_unique<UnaryExpr>(ExprKind::Not, p, std::move(t));
    return t;
  }
};

}  // namespace

namespace {

void bind_names(Program& program) {
  for (size_t slot = 0; slot < program.names.size(); ++slot) {
    const std::string& name = program.names[slot];
    Value initial;
    if (!find_global(name, initial)) initial = Value::undefined_named(name);
    program.initial.push_back(std::move(initial));
    auto& engine = program.engine;
    int* engine_slot = name == "loop"      ? &engine.loop
                       : name == "caller"  ? &engine.caller
                       : name == "varargs" ? &engine.varargs
                       : name == "kwargs"  ? &engine.kwargs
                                           : nullptr;
    if (engine_slot) *engine_slot = static_cast<int>(slot);
  }
}

}  // namespace

Program parse(const std::string& source) {
  Program program = Parser(source).run();
  check_filters_and_tests(program);
  bind_names(program);
  return program;
}

}  // namespace heron::chat::jinja
