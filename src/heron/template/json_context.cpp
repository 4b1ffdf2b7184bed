#include "heron/template/json_context.h"

#include <cstdint>

#include "heron/core/error.h"

namespace heron::chat::jinja {

namespace {

// An empty block with room for n Dicts.
std::vector<Dict>& new_dicts(JsonPool& pool, size_t n) {
  auto& block = pool.blocks.emplace_back();
  block.reserve(n);
  return block;
}

}  // namespace

Value from_json(JsonPool& pool, const ContextJson& j) {
  using Type = ContextJson::value_t;
  switch (j.type()) {
    case Type::null:
      return Value::none();
    case Type::boolean:
      return Value(j.get<bool>());
    case Type::number_integer:
      return Value(j.get<int64_t>());
    case Type::number_unsigned: {
      auto u = j.get<uint64_t>();
      if (u <= static_cast<uint64_t>(INT64_MAX)) return Value(static_cast<int64_t>(u));
      return Value(static_cast<double>(u));
    }
    case Type::number_float:
      return Value(j.get<double>());
    case Type::string:
      return Value::borrowed(j.get_ref<const std::string&>());
    case Type::array: {
      // The objects of an array (the messages) share one block of Dicts, made at the
      // first object with room for every item.
      const auto& array = j.get_ref<const ContextJson::array_t&>();
      std::vector<Dict>* dicts = nullptr;
      ValueList items;
      items.reserve(array.size());
      for (const auto& item : array) {
        if (const auto* members = item.get_ptr<const ContextJson::object_t*>()) {
          if (!dicts) dicts = &new_dicts(pool, array.size());
          items.push_back(Value::borrowed(dicts->emplace_back(pool, *members)));
        } else {
          items.push_back(from_json(pool, item));
        }
      }
      return Value(std::move(items));
    }
    case Type::object:
      return Value::borrowed(
          new_dicts(pool, 1).emplace_back(pool, j.get_ref<const ContextJson::object_t&>()));
    default:
      throw Error("chat template context: unsupported JSON value (binary data)");
  }
}

}  // namespace heron::chat::jinja
