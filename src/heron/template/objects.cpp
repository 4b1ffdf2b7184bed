#include "heron/template/objects.h"

#include "heron/template/builtins.h"
#include "heron/template/failure.h"
#include "heron/template/ops.h"

namespace heron::chat::jinja {

bool MacroDef::get_attr(std::string_view attr, Value& out) const {
  if (attr == "name") {
    out = Value(name);
  } else if (attr == "arguments") {
    ValueList names;
    for (const auto& p : *params) names.emplace_back(p.name);
    out = Value(std::move(names), ListKind::Tuple);
  } else if (attr == "catch_kwargs" || attr == "catch_varargs" || attr == "caller") {
    out = Value(false);
  } else {
    return false;
  }
  return true;
}

Value LoopObject::call(Interpreter& interp, CallArgs& args) {
  if (args.positional.size() != 1 || !args.kwargs.empty()) {
    type_error("loop() takes exactly one argument");
  }
  return Value(interp.run_loop(*stmt, args.positional[0], depth + 1));
}

bool LoopObject::get_attr(std::string_view attr, Value& out) const {
  const auto length = static_cast<int64_t>(items->size());
  const auto i = static_cast<int64_t>(index0);
  if (attr == "index") {
    out = Value(i + 1);
  } else if (attr == "index0") {
    out = Value(i);
  } else if (attr == "revindex") {
    out = Value(length - i);
  } else if (attr == "revindex0") {
    out = Value(length - i - 1);
  } else if (attr == "first") {
    out = Value(i == 0);
  } else if (attr == "last") {
    out = Value(i == length - 1);
  } else if (attr == "length") {
    out = Value(length);
  } else if (attr == "depth") {
    out = Value(static_cast<int64_t>(depth));
  } else if (attr == "depth0") {
    out = Value(static_cast<int64_t>(depth - 1));
  } else if (attr == "previtem") {
    out = i > 0 ? (*items)[index0 - 1] : Value::undefined_hint("there is no previous item");
  } else if (attr == "nextitem") {
    out = i + 1 < length ? (*items)[index0 + 1] : Value::undefined_hint("there is no next item");
  } else if (attr == "cycle") {
    const size_t at = index0;
    out = Value(std::make_shared<Function>("cycle", [at](Interpreter&, CallArgs& args) -> Value {
      if (args.positional.empty()) type_error("no items for cycling given");
      return args.positional[at % args.positional.size()];
    }));
  } else if (attr == "changed") {
    auto* self = const_cast<LoopObject*>(this);
    out =
        Value(std::make_shared<Function>("changed", [self](Interpreter&, CallArgs& args) -> Value {
          Value now(args.positional, ListKind::Tuple);
          if (self->changed_seen && equals(self->last_changed, now)) return Value(false);
          self->changed_seen = true;
          self->last_changed = now;
          return Value(true);
        }));
  } else {
    return false;
  }
  return true;
}

std::string LoopObject::repr() const {
  return "<LoopContext " + std::to_string(index0 + 1) + "/" + std::to_string(items->size()) + ">";
}

bool NamespaceObject::get_attr(std::string_view attr, Value& out) const {
  return attrs.find(attr, out);
}

std::string NamespaceObject::repr() const {
  return "<Namespace " + jinja::repr(Value(Dict(attrs))) + ">";
}

Value BoundMethod::call(Interpreter& interp, CallArgs& args) {
  return call_method(interp, self, name, args);
}

std::string BoundMethod::repr() const {
  return "<built-in method " + name + " of " + std::string(self.type_name()) + " object>";
}

}  // namespace heron::chat::jinja
