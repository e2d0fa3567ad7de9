// One declaration per config key of an options struct: the key's schema, the member it sets,
// and how the member is reported back. From that one list come the schema fields a component
// registers, the reading of a validated config node into the struct, and the struct as a Value
// tree (what the benchmark hands its PyTorch reference as JSON).
//
//   FieldTable<SECONDOptions>()
//       .key("in_channels", Schema::integer().min(1).def(64), &SECONDOptions::in_channels)
//       .key("layer_nums", ..., &SECONDOptions::layer_nums)
//       .nested("norm_cfg", norm_schema, &SECONDOptions::norm_cfg, norm_table);
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "worker/config/config.h"
#include "worker/config/schema.h"
#include "worker/config/value.h"

namespace ddp3d::config {
namespace field_codec {

inline Value to_value(bool b) {
  return Value::boolean(b);
}
inline Value to_value(std::int64_t i) {
  return Value::integer(i);
}
inline Value to_value(double d) {
  return Value::real(d);
}
inline Value to_value(const std::string& s) {
  return Value::string(s);
}
template <typename E, std::size_t N>
Value to_value(const std::array<E, N>& xs);
template <typename E>
Value to_value(const std::vector<E>& xs) {
  std::vector<Value> items;
  items.reserve(xs.size());
  for (const E& x : xs) items.push_back(to_value(x));
  return Value::list(std::move(items));
}
template <typename E, std::size_t N>
Value to_value(const std::array<E, N>& xs) {
  return to_value(std::vector<E>(xs.begin(), xs.end()));
}

template <typename T>
struct IsArray : std::false_type {};
template <typename E, std::size_t N>
struct IsArray<std::array<E, N>> : std::true_type {};

// A fixed-size member from a list the schema checked the length of (the check here only guards
// a schema that says otherwise).
template <typename E, std::size_t N>
std::array<E, N> to_array(const std::vector<E>& v, const Config& node, const std::string& key) {
  if (v.size() != N) {
    throw ConfigError(
        node.origin(key), node.path() + "." + key,
        "expected " + std::to_string(N) + " entries, got " + std::to_string(v.size()));
  }
  std::array<E, N> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = v[i];
  return out;
}

template <typename T>
void read(const Config& node, const std::string& key, T& out) {
  if constexpr (ConfigGettable<T>) {
    out = node.get<T>(key);
  } else if constexpr (IsArray<T>::value) {
    using E = typename T::value_type;
    out = to_array<E, std::tuple_size_v<T>>(node.get<std::vector<E>>(key), node, key);
  } else {  // std::vector<std::array<E, N>>
    using A = typename T::value_type;
    using E = typename A::value_type;
    out.clear();
    for (const auto& row : node.get<std::vector<std::vector<E>>>(key)) {
      out.push_back(to_array<E, std::tuple_size_v<A>>(row, node, key));
    }
  }
}

}  // namespace field_codec

template <typename Options>
class FieldTable {
 public:
  using Reader = std::function<void(const Config& node, Options& out)>;
  using Writer = std::function<Value(const Options& options)>;

  // A key that sets `member` when present (a missing or null key leaves the member as it is).
  template <typename M>
  FieldTable&& key(std::string name, Schema schema, M Options::*member) && {
    Reader read = [name, member](const Config& node, Options& out) {
      if (node.has(name)) field_codec::read(node, name, out.*member);
    };
    Writer write = [member](const Options& o) { return field_codec::to_value(o.*member); };
    return std::move(*this).custom(std::move(name), std::move(schema), read, write);
  }
  // A key the schema accepts that sets nothing (mmdet3d spells out a fixed choice, e.g. `type`).
  FieldTable&& accepted(std::string name, Schema schema) && {
    entries_.push_back({std::move(name), std::move(schema), nullptr, nullptr});
    return std::move(*this);
  }
  // A member no key sets (a fixed implementation choice) that to_value() still reports.
  template <typename M>
  FieldTable&& fixed(std::string name, M Options::*member) && {
    Writer write = [member](const Options& o) { return field_codec::to_value(o.*member); };
    entries_.push_back({std::move(name), std::nullopt, nullptr, write});
    return std::move(*this);
  }
  // A sub-mapping read by `table`; `schema` is its mapping (built from table.fields()).
  template <typename Sub>
  FieldTable&& nested(std::string name, Schema schema, Sub Options::*member,
                      FieldTable<Sub> table) && {
    Reader read = [name, member, table](const Config& node, Options& out) {
      if (node.has(name)) table.read(node.node(name), out.*member);
    };
    Writer write = [member, table](const Options& o) { return table.to_value(o.*member); };
    return std::move(*this).custom(std::move(name), std::move(schema), read, write);
  }
  // A list of mappings, each read by `table` into a default-constructed Sub.
  template <typename Sub>
  FieldTable&& nested_list(std::string name, Schema schema, std::vector<Sub> Options::*member,
                           FieldTable<Sub> table) && {
    Reader read = [name, member, table](const Config& node, Options& out) {
      if (!node.has(name)) return;
      (out.*member).clear();
      for (const Config& item : node.list(name)) table.read(item, (out.*member).emplace_back());
    };
    Writer write = [member, table](const Options& o) {
      std::vector<Value> items;
      for (const Sub& s : o.*member) items.push_back(table.to_value(s));
      return Value::list(std::move(items));
    };
    return std::move(*this).custom(std::move(name), std::move(schema), read, write);
  }
  // A key with its own reading and reporting (e.g. a name mapped to an enum).
  FieldTable&& custom(std::string name, Schema schema, Reader read, Writer write) && {
    entries_.push_back({std::move(name), std::move(schema), std::move(read), std::move(write)});
    return std::move(*this);
  }

  // Every key's schema, in declaration order.
  std::vector<Field> fields() const {
    std::vector<Field> out;
    for (const Entry& e : entries_) {
      if (e.schema) out.emplace_back(e.name, *e.schema);
    }
    return out;
  }
  // Sets the members from a node the schema validated (defaults filled).
  void read(const Config& node, Options& out) const {
    for (const Entry& e : entries_) {
      if (e.read) e.read(node, out);
    }
  }
  // The members as a mapping, keyed as in the config.
  Value to_value(const Options& options) const {
    Value out = Value::map();
    for (const Entry& e : entries_) {
      if (e.write) out.set(e.name, e.write(options));
    }
    return out;
  }

 private:
  struct Entry {
    std::string name;
    std::optional<Schema> schema;  // none: not a config key
    Reader read;                   // none: sets nothing
    Writer write;                  // none: not reported
  };
  std::vector<Entry> entries_;
};

}  // namespace ddp3d::config
