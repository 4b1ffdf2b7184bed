#pragma once
// The values a chat template computes with, modelled on the Python objects jinja2 uses:
// undefined, None, bool, int, float, str, list/tuple, dict (insertion-ordered) and objects
// (namespace, macro, loop, functions). Lists, dicts and strings are shared and immutable
// once built (the sandbox forbids mutating them), so copying a Value is cheap.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "heron/template/same_text.h"

namespace heron::chat::jinja {

class Value;
class Interpreter;
struct CallArgs;

using ValueList = std::vector<Value>;

enum class Kind : uint8_t { Undefined, None, Bool, Int, Float, String, List, Dict, Object };

// How a list-like value behaves where Python types differ: a tuple renders with
// parentheses, a generator (what map/select/... return) is always true and has no len(),
// dict views (d.keys(), d.values(), d.items()) have len() but no indexing.
enum class ListKind : uint8_t { List, Tuple, Generator, DictKeys, DictValues, DictItems };

// Why a value is undefined, for the error raised when it is used.
struct UndefinedInfo {
  std::string hint;          // a complete message, when set
  std::string name;          // the missing name, attribute or key (as Python repr for keys)
  std::string owner;         // "dict object", "None", ...; empty for a missing variable
  bool name_is_key = false;  // an integer key: "list object has no element 3"
  std::string message() const;
};

class Dict;

// Objects with behaviour: namespace, macro, loop, builtin functions, bound methods.
class Object {
 public:
  virtual ~Object() = default;
  virtual std::string_view type_name() const = 0;
  // Attribute access; returns false when there is no such attribute.
  virtual bool get_attr(std::string_view name, Value& out) const;
  virtual bool callable() const { return false; }
  virtual Value call(Interpreter& interp, CallArgs& args);
  virtual std::string repr() const;
};

class Value {
 public:
  Value() = default;  // undefined
  static Value none() { return Value(Kind::None); }
  static Value undefined_named(std::string name);
  static Value undefined_attr(const Value& owner, std::string name);
  static Value undefined_key(const Value& owner, const Value& key);
  static Value undefined_hint(std::string hint);
  Value(bool b) : kind_(Kind::Bool) { u_.b = b; }
  Value(int64_t i) : kind_(Kind::Int) { u_.i = i; }
  Value(int i) : kind_(Kind::Int) { u_.i = i; }
  Value(double f) : kind_(Kind::Float) { u_.f = f; }
  Value(std::string s);
  Value(std::string_view s) : Value(std::string(s)) {}
  Value(const char* s) : Value(std::string(s)) {}
  Value(std::shared_ptr<const std::string> s) : kind_(Kind::String), p_(std::move(s)) {}
  // markupsafe.Markup: what `safe` and `escape` return. `+` with a Markup escapes the
  // other str operand and gives a Markup; everything else treats it as a plain str.
  static Value markup(std::string s) {
    Value v(std::move(s));
    v.markup_ = true;
    return v;
  }
  // A string owned by someone else that outlives every Value made from it (the render
  // context): no copy, no allocation.
  static Value borrowed(const std::string& s) { return Value(Kind::String, &s); }
  static Value borrowed(const Dict& d) { return Value(Kind::Dict, &d); }
  Value(ValueList items, ListKind list_kind = ListKind::List);
  Value(std::shared_ptr<const ValueList> items, ListKind list_kind = ListKind::List)
      : kind_(Kind::List), list_kind_(list_kind), p_(std::move(items)) {}
  Value(Dict dict);
  Value(std::shared_ptr<const Dict> dict) : kind_(Kind::Dict), p_(std::move(dict)) {}
  Value(std::shared_ptr<Object> obj) : kind_(Kind::Object), p_(std::move(obj)) {}

  Kind kind() const { return kind_; }
  ListKind list_kind() const { return list_kind_; }
  bool is_undefined() const { return kind_ == Kind::Undefined; }
  bool is_none() const { return kind_ == Kind::None; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  bool is_int() const { return kind_ == Kind::Int; }
  bool is_float() const { return kind_ == Kind::Float; }
  bool is_number() const {
    return kind_ == Kind::Int || kind_ == Kind::Float || kind_ == Kind::Bool;
  }
  bool is_string() const { return kind_ == Kind::String; }
  bool is_markup() const { return kind_ == Kind::String && markup_; }
  bool is_list() const { return kind_ == Kind::List; }
  bool is_dict() const { return kind_ == Kind::Dict; }
  bool is_object() const { return kind_ == Kind::Object; }
  // A list or tuple: indexable, sliceable, concatenable.
  bool is_sequence() const {
    return kind_ == Kind::List && (list_kind_ == ListKind::List || list_kind_ == ListKind::Tuple);
  }

  bool as_bool() const { return u_.b; }
  int64_t as_int() const { return kind_ == Kind::Bool ? (u_.b ? 1 : 0) : u_.i; }
  double as_float() const { return kind_ == Kind::Float ? u_.f : static_cast<double>(as_int()); }
  const std::string& str() const { return *static_cast<const std::string*>(p_.get()); }
  const std::shared_ptr<const std::string> str_ptr() const {
    return std::static_pointer_cast<const std::string>(p_);
  }
  const ValueList& list() const { return *static_cast<const ValueList*>(p_.get()); }
  std::shared_ptr<const ValueList> list_ptr() const {
    return std::static_pointer_cast<const ValueList>(p_);
  }
  const Dict& dict() const { return *static_cast<const Dict*>(p_.get()); }
  Object& object() const { return *static_cast<Object*>(const_cast<void*>(p_.get())); }
  std::shared_ptr<Object> object_ptr() const {
    return std::static_pointer_cast<Object>(std::const_pointer_cast<void>(p_));
  }
  const UndefinedInfo* undefined_info() const {
    return static_cast<const UndefinedInfo*>(p_.get());
  }
  // Identity of a shared payload (for `sameas`).
  const void* payload() const { return p_.get(); }

  // Python's bool(x).
  bool truthy() const;
  // Python's type(x).__name__ ("int", "str", "NoneType", ...).
  std::string_view type_name() const;

 private:
  explicit Value(Kind k) : kind_(k) {}
  // Points at `payload` without owning it (an empty shared_ptr aliasing it).
  Value(Kind k, const void* payload) : kind_(k), p_(std::shared_ptr<const void>(), payload) {}
  Kind kind_ = Kind::Undefined;
  ListKind list_kind_ = ListKind::List;
  bool markup_ = false;
  union {
    bool b;
    int64_t i;
    double f;
  } u_{};
  std::shared_ptr<const void> p_;
};

// The render context: read in place (json_context.h), so a render converts only what
// the template touches.
using ContextJson = nlohmann::ordered_json;
struct JsonPool;

// An insertion-ordered mapping with Python key equality (1 == 1.0 == True). A Dict made
// from a context JSON object reads its members in place until something needs all its
// items; values found there are converted into `pool`, which lives as long as the render.
class Dict {
 public:
  using Item = std::pair<Value, Value>;
  Dict() = default;
  Dict(JsonPool& pool, const ContextJson::object_t& members) : pool_(&pool), members_(&members) {}
  const std::vector<Item>& items() const {
    if (members_) materialize();
    return items_;
  }
  size_t size() const { return members_ ? members_->size() : items_.size(); }
  bool empty() const { return size() == 0; }
  bool find(const Value& key, Value& out) const;
  bool find(std::string_view key, Value& out) const;
  // The value of `key` when it is a plain str (not Markup), else null: the hot
  // message['role'] read, inline and without making a Value.
  const std::string* find_string(std::string_view key) const {
    if (!members_) return find_string_in_items(key);
    const ContextJson* v = find_json(key);
    return v ? v->get_ptr<const std::string*>() : nullptr;
  }
  // Whether the members still live in the context JSON (find_json reads them).
  bool reads_json() const { return members_ != nullptr; }
  // The JSON value of `key` (null when missing); only while reads_json().
  const ContextJson* find_json(std::string_view key) const {
    for (const auto& [k, v] : *members_) {  // chat messages have a handful of keys
      if (same_text(k, key)) return &v;
    }
    return nullptr;
  }
  bool contains(const Value& key) const;
  // Inserts or replaces, keeping the first insertion's position (as Python does).
  void set(Value key, Value value);
  void reserve(size_t n) { items_.reserve(n); }
  // Appends a key known to be new (JSON object keys are unique).
  void append_new(Value key, Value value) { items_.emplace_back(std::move(key), std::move(value)); }

 private:
  void materialize() const;
  const std::string* find_string_in_items(std::string_view key) const;
  JsonPool* pool_ = nullptr;
  mutable const ContextJson::object_t* members_ = nullptr;  // set while items live in JSON
  mutable std::vector<Item> items_;
};

}  // namespace heron::chat::jinja
