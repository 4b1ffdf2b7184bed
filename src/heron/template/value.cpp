#include "heron/template/value.h"

#include "heron/template/failure.h"
#include "heron/template/json_context.h"
#include "heron/template/ops.h"
#include "heron/template/pystr.h"

namespace heron::chat::jinja {

std::string UndefinedInfo::message() const {
  if (!hint.empty()) return hint;
  if (owner.empty()) return "'" + name + "' is undefined";
  if (name_is_key) return owner + " has no element " + name;
  return "'" + owner + "' has no attribute '" + name + "'";
}

namespace {
std::string owner_repr(const Value& owner) {
  if (owner.is_none()) return "None";
  return std::string(owner.type_name()) + " object";
}
}  // namespace

Value Value::undefined_named(std::string name) {
  auto info = std::make_shared<UndefinedInfo>();
  info->name = std::move(name);
  Value v;
  v.p_ = std::move(info);
  return v;
}

Value Value::undefined_attr(const Value& owner, std::string name) {
  auto info = std::make_shared<UndefinedInfo>();
  info->name = std::move(name);
  info->owner = owner_repr(owner);
  Value v;
  v.p_ = std::move(info);
  return v;
}

Value Value::undefined_key(const Value& owner, const Value& key) {
  if (key.is_string()) return undefined_attr(owner, key.str());
  auto info = std::make_shared<UndefinedInfo>();
  info->name = repr(key);
  info->owner = owner_repr(owner);
  info->name_is_key = true;
  Value v;
  v.p_ = std::move(info);
  return v;
}

Value Value::undefined_hint(std::string hint) {
  auto info = std::make_shared<UndefinedInfo>();
  info->hint = std::move(hint);
  Value v;
  v.p_ = std::move(info);
  return v;
}

Value::Value(std::string s)
    : kind_(Kind::String), p_(std::make_shared<const std::string>(std::move(s))) {}

Value::Value(ValueList items, ListKind list_kind)
    : kind_(Kind::List),
      list_kind_(list_kind),
      p_(std::make_shared<const ValueList>(std::move(items))) {}

Value::Value(Dict dict) : kind_(Kind::Dict), p_(std::make_shared<const Dict>(std::move(dict))) {}

bool Value::truthy() const {
  switch (kind_) {
    case Kind::Undefined:
    case Kind::None:
      return false;
    case Kind::Bool:
      return u_.b;
    case Kind::Int:
      return u_.i != 0;
    case Kind::Float:
      return u_.f != 0.0;
    case Kind::String:
      return !str().empty();
    case Kind::List:
      return list_kind_ == ListKind::Generator || !list().empty();
    case Kind::Dict:
      return !dict().empty();
    case Kind::Object:
      return true;
  }
  return false;
}

std::string_view Value::type_name() const {
  switch (kind_) {
    case Kind::Undefined:
      return "Undefined";
    case Kind::None:
      return "NoneType";
    case Kind::Bool:
      return "bool";
    case Kind::Int:
      return "int";
    case Kind::Float:
      return "float";
    case Kind::String:
      return markup_ ? "Markup" : "str";
    case Kind::List:
      switch (list_kind_) {
        case ListKind::Tuple:
          return "tuple";
        case ListKind::Generator:
          return "generator";
        case ListKind::DictKeys:
          return "dict_keys";
        case ListKind::DictValues:
          return "dict_values";
        case ListKind::DictItems:
          return "dict_items";
        default:
          return "list";
      }
    case Kind::Dict:
      return "dict";
    case Kind::Object:
      return object().type_name();
  }
  return "object";
}

bool Object::get_attr(std::string_view, Value&) const {
  return false;
}

Value Object::call(Interpreter&, CallArgs&) {
  type_error(cat("'", type_name(), "' object is not callable"));
}

std::string Object::repr() const {
  return cat("<", type_name(), " object>");
}

namespace {
// Python hashes 1, 1.0 and True alike; string keys compare by content.
bool key_equal(const Value& a, const Value& b) {
  if (a.is_string() && b.is_string()) return a.str() == b.str();
  return equals(a, b);
}
}  // namespace

void Dict::materialize() const {
  items_.reserve(members_->size());
  for (const auto& [k, v] : *members_)
    items_.emplace_back(Value::borrowed(k), from_json(*pool_, v));
  members_ = nullptr;
}

bool Dict::find(const Value& key, Value& out) const {
  if (key.is_string()) return find(std::string_view(key.str()), out);
  for (const auto& [k, v] : items()) {  // JSON keys are strings: never equal here
    if (key_equal(k, key)) {
      out = v;
      return true;
    }
  }
  return false;
}

bool Dict::find(std::string_view key, Value& out) const {
  if (members_) {
    const ContextJson* v = find_json(key);
    if (!v) return false;
    // Strings (contents, names) are the usual hit: borrowed without the conversion.
    const auto* s = v->get_ptr<const std::string*>();
    out = s ? Value::borrowed(*s) : from_json(*pool_, *v);
    return true;
  }
  for (const auto& [k, v] : items_) {
    if (k.is_string() && k.str() == key) {
      out = v;
      return true;
    }
  }
  return false;
}

bool Dict::contains(const Value& key) const {
  // 'tool_calls' in message: no conversion of the value
  if (members_ && key.is_string()) return find_json(key.str()) != nullptr;
  Value ignored;
  return find(key, ignored);
}

const std::string* Dict::find_string_in_items(std::string_view key) const {
  for (const auto& [k, v] : items_) {
    if (k.is_string() && k.str() == key) {
      return v.is_string() && !v.is_markup() ? &v.str() : nullptr;
    }
  }
  return nullptr;
}

void Dict::set(Value key, Value value) {
  if (members_) materialize();
  for (auto& [k, v] : items_) {
    if (key_equal(k, key)) {
      v = std::move(value);
      return;
    }
  }
  items_.emplace_back(std::move(key), std::move(value));
}

}  // namespace heron::chat::jinja
