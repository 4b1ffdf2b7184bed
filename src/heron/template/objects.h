#pragma once
// The object values templates handle: macros, the `loop` variable, namespaces, bound
// methods of str/list/dict values and builtin functions.
#include <functional>
#include <memory>
#include <string>

#include "heron/template/interpreter.h"

namespace heron::chat::jinja {

struct MacroDef : Object {
  std::string name;
  const std::vector<Param>* params = nullptr;
  const Body* body = nullptr;
  std::shared_ptr<Scope> closure;
  std::string_view type_name() const override { return "Macro"; }
  bool callable() const override { return true; }
  Value call(Interpreter& interp, CallArgs& args) override {
    return interp.call_macro(*this, args);
  }
  bool get_attr(std::string_view attr, Value& out) const override;
  std::string repr() const override { return "<Macro '" + name + "'>"; }
};

// jinja2's LoopContext for one running loop.
struct LoopObject : Object {
  std::shared_ptr<const ValueList> items;
  size_t index0 = 0;
  int depth = 1;
  const ForStmt* stmt = nullptr;  // for recursive loops: loop(children)
  Value last_changed;
  bool changed_seen = false;
  std::string_view type_name() const override { return "LoopContext"; }
  bool callable() const override { return stmt && stmt->recursive; }
  Value call(Interpreter& interp, CallArgs& args) override;
  bool get_attr(std::string_view attr, Value& out) const override;
  std::string repr() const override;
};

struct NamespaceObject : Object {
  Dict attrs;
  std::string_view type_name() const override { return "Namespace"; }
  bool get_attr(std::string_view attr, Value& out) const override;
  std::string repr() const override;
};

struct BoundMethod : Object {
  BoundMethod(Value s, std::string n) : self(std::move(s)), name(std::move(n)) {}
  Value self;
  std::string name;
  std::string_view type_name() const override { return "builtin_function_or_method"; }
  bool callable() const override { return true; }
  Value call(Interpreter& interp, CallArgs& args) override;
  std::string repr() const override;
};

struct Function : Object {
  using Fn = std::function<Value(Interpreter&, CallArgs&)>;
  Function(std::string n, Fn f) : name(std::move(n)), fn(std::move(f)) {}
  std::string name;
  Fn fn;
  std::string_view type_name() const override { return "function"; }
  bool callable() const override { return true; }
  Value call(Interpreter& interp, CallArgs& args) override { return fn(interp, args); }
  std::string repr() const override { return "<function " + name + ">"; }
};

}  // namespace heron::chat::jinja
