// The global functions of transformers' environment: jinja2's range (capped by the
// sandbox), namespace, cycler and joiner, plus transformers' dict, raise_exception and
// strftime_now. Nothing here touches files, the environment or the network.
#include <ctime>

#include "heron/template/builtins.h"
#include "heron/template/failure.h"
#include "heron/template/interpreter.h"
#include "heron/template/objects.h"
#include "heron/template/ops.h"

namespace heron::chat::jinja {

namespace {

constexpr int64_t kMaxRange = 100000;  // jinja2.sandbox.MAX_RANGE

int64_t int_arg(const Value& v) {
  if (v.is_int() || v.is_bool()) return v.as_int();
  if (v.is_undefined()) undefined_error(v);
  type_error(cat("'", v.type_name(), "' object cannot be interpreted as an integer"));
}

Value g_range(Interpreter&, CallArgs& a) {
  if (!a.kwargs.empty()) type_error("range() takes no keyword arguments");
  if (a.positional.empty() || a.positional.size() > 3) {
    type_error("range expected at most 3 arguments, got " + std::to_string(a.positional.size()));
  }
  int64_t start = 0, stop, step = 1;
  if (a.positional.size() == 1) {
    stop = int_arg(a.positional[0]);
  } else {
    start = int_arg(a.positional[0]);
    stop = int_arg(a.positional[1]);
    if (a.positional.size() == 3) step = int_arg(a.positional[2]);
  }
  if (step == 0) fail("ValueError", "range() arg 3 must not be zero");
  const int64_t count = step > 0 ? (stop > start ? (stop - start + step - 1) / step : 0)
                                 : (start > stop ? (start - stop - step - 1) / -step : 0);
  if (count > kMaxRange) {
    fail("OverflowError",
         "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
  }
  ValueList out;
  out.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) out.emplace_back(start + i * step);
  return Value(std::move(out));
}

// dict(*args, **kwargs) and namespace(...): a mapping or pairs, then keywords.
Dict build_dict(CallArgs& a, const char* what) {
  if (a.positional.size() > 1) {
    type_error(std::string(what) + " expected at most 1 argument, got " +
               std::to_string(a.positional.size()));
  }
  Dict d;
  if (!a.positional.empty()) {
    const Value& src = a.positional[0];
    if (src.is_dict()) {
      d = src.dict();
    } else {
      for (auto held = iterate(src); const auto& pair : *held) {
        auto kv = iterate(pair);
        if (kv->size() != 2) {
          fail("ValueError", "dictionary update sequence element has length " +
                                 std::to_string(kv->size()) + "; 2 is required");
        }
        d.set((*kv)[0], (*kv)[1]);
      }
    }
  }
  for (auto& [k, v] : a.kwargs) d.set(Value(k), v);
  return d;
}

Value g_dict(Interpreter&, CallArgs& a) {
  return Value(build_dict(a, "dict"));
}

Value g_namespace(Interpreter&, CallArgs& a) {
  auto ns = std::make_shared<NamespaceObject>();
  ns->attrs = build_dict(a, "namespace");
  for (const auto& [k, v] : ns->attrs.items()) {
    if (k.is_string() && !k.str().empty() && k.str()[0] == '_') {
      fail("SecurityError",
           "Chat templates cannot store underscore-prefixed attributes on a "
           "namespace, but got '" +
               k.str() + "'. Please rename the attribute.");
    }
  }
  return Value(std::shared_ptr<Object>(std::move(ns)));
}

Value g_raise_exception(Interpreter&, CallArgs& a) {
  ArgReader r("raise_exception", a, {"message"});
  if (!r.get(0)) type_error("raise_exception() missing 1 required positional argument: 'message'");
  fail("TemplateError", to_str(*r.get(0)));
}

Value g_strftime_now(Interpreter& in, CallArgs& a) {
  ArgReader r("strftime_now", a, {"format"});
  if (!r.get(0) || !r.get(0)->is_string()) type_error("strftime() argument 1 must be str");
  std::tm tm{};
  if (in.settings().now) {
    tm = *in.settings().now;
  } else {
    std::time_t t = std::time(nullptr);
    localtime_r(&t, &tm);
  }
  const std::string& format = r.get(0)->str();
  if (format.empty()) return Value(std::string());
  std::string buf(format.size() * 4 + 64, '\0');
  size_t n = std::strftime(buf.data(), buf.size(), format.c_str(), &tm);
  buf.resize(n);
  return Value(std::move(buf));
}

struct CyclerObject : Object {
  ValueList items;
  size_t pos = 0;
  std::string_view type_name() const override { return "Cycler"; }
  bool get_attr(std::string_view attr, Value& out) const override {
    auto* self = const_cast<CyclerObject*>(this);
    if (attr == "current") {
      out = items.empty() ? Value::none() : items[pos];
    } else if (attr == "next") {
      out = Value(std::make_shared<Function>("next", [self](Interpreter&, CallArgs&) {
        Value v = self->items[self->pos];
        self->pos = (self->pos + 1) % self->items.size();
        return v;
      }));
    } else if (attr == "reset") {
      out = Value(std::make_shared<Function>("reset", [self](Interpreter&, CallArgs&) {
        self->pos = 0;
        return Value::none();
      }));
    } else {
      return false;
    }
    return true;
  }
};

Value g_cycler(Interpreter&, CallArgs& a) {
  if (a.positional.empty()) type_error("at least one item has to be provided");
  auto c = std::make_shared<CyclerObject>();
  c->items = a.positional;
  return Value(std::shared_ptr<Object>(std::move(c)));
}

Value g_joiner(Interpreter&, CallArgs& a) {
  ArgReader r("joiner", a, {"sep"});
  auto used = std::make_shared<bool>(false);
  std::string sep = r.get(0) ? to_str(*r.get(0)) : ", ";
  return Value(std::make_shared<Function>("joiner", [used, sep](Interpreter&, CallArgs&) {
    if (!*used) {
      *used = true;
      return Value(std::string());
    }
    return Value(sep);
  }));
}

// jinja2's lipsum() is random filler text; templates only ever test that it exists.
Value g_lipsum(Interpreter&, CallArgs&) {
  fail("TypeError", "lipsum() is not supported in chat templates");
}

}  // namespace

bool find_global(std::string_view name, Value& out) {
  using Fn = Value (*)(Interpreter&, CallArgs&);
  static const std::pair<std::string_view, Fn> globals[] = {
      {"range", g_range},
      {"dict", g_dict},
      {"namespace", g_namespace},
      {"raise_exception", g_raise_exception},
      {"strftime_now", g_strftime_now},
      {"cycler", g_cycler},
      {"joiner", g_joiner},
      {"lipsum", g_lipsum},
  };
  for (const auto& [n, fn] : globals) {
    if (n == name) {
      out = Value(std::make_shared<Function>(std::string(n), fn));
      return true;
    }
  }
  return false;
}

}  // namespace heron::chat::jinja
