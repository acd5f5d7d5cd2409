// Metadata values: type names and the typed accessors of gguf::File.
#include <array>
#include <limits>
#include <type_traits>

#include "common/error.h"
#include "gguf/gguf.h"

namespace hart::gguf {

// The Value alternatives are listed in ValueType order, so a value's type is its variant index.
static_assert(std::is_same_v<std::variant_alternative_t<size_t(ValueType::BOOL), Value>, bool>);
static_assert(std::is_same_v<std::variant_alternative_t<size_t(ValueType::STRING), Value>, std::string>);
static_assert(std::is_same_v<std::variant_alternative_t<size_t(ValueType::ARRAY), Value>,
                             std::shared_ptr<Array>>);
static_assert(std::is_same_v<std::variant_alternative_t<size_t(ValueType::FLOAT64), Value>, double>);
static_assert(std::variant_size_v<Value> == size_t(ValueType::FLOAT64) + 1);

std::string_view value_type_name(ValueType t) {
  static constexpr std::array<std::string_view, 13> kNames = {
      "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64", "f64"};
  const auto i = size_t(t);
  return i < kNames.size() ? kNames[i] : "unknown";
}

ValueType value_type(const Value& v) { return ValueType(v.index()); }

namespace {

struct Integer {
  bool is_integer;
  bool fits;  // in int64
  int64_t value;
};

Integer integer_of(const Value& v) {
  return std::visit(
      [](const auto& x) -> Integer {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool> || !std::is_integral_v<T>) {
          return {false, false, 0};
        } else if constexpr (std::is_same_v<T, uint64_t>) {
          return {true, x <= uint64_t(std::numeric_limits<int64_t>::max()), int64_t(x)};
        } else {
          return {true, true, int64_t(x)};
        }
      },
      v);
}

std::optional<double> number_of(const Value& v) {
  return std::visit(
      [](const auto& x) -> std::optional<double> {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) return double(x);
        return std::nullopt;
      },
      v);
}

std::string describe(const Value& v) {
  if (const auto* a = std::get_if<std::shared_ptr<Array>>(&v))
    return "an array of " + std::string(value_type_name((*a)->elem_type));
  return "of type " + std::string(value_type_name(value_type(v)));
}

}  // namespace

const Value* File::find(std::string_view key) const {
  auto it = kv_index_.find(key);
  return it == kv_index_.end() ? nullptr : &kv_[it->second].value;
}

const TensorInfo* File::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

namespace {

[[noreturn]] void wrong_type(const std::string& path, std::string_view key, const Value& v,
                             std::string_view expected) {
  throw Error(path + ": key '" + std::string(key) + "' is " + describe(v) + ", expected " +
              std::string(expected));
}

int64_t checked_integer(const std::string& path, std::string_view key, const Value& v,
                        std::string_view expected) {
  const Integer i = integer_of(v);
  if (!i.is_integer) wrong_type(path, key, v, expected);
  if (!i.fits) throw Error(path + ": key '" + std::string(key) + "' does not fit in int64");
  return i.value;
}

double checked_number(const std::string& path, std::string_view key, const Value& v,
                      std::string_view expected) {
  const auto d = number_of(v);
  if (!d) wrong_type(path, key, v, expected);
  return *d;
}

// Converts every item of the array under `key`; `convert` returns nullopt for an item of the
// wrong type. nullopt when the key is missing, an Error when it holds anything else.
template <class T, class Convert>
std::optional<std::vector<T>> convert_array(const File& f, std::string_view key,
                                            std::string_view expected, Convert convert) {
  const Value* v = f.find(key);
  if (!v) return std::nullopt;
  const auto* a = std::get_if<std::shared_ptr<Array>>(v);
  if (!a) wrong_type(f.path(), key, *v, expected);
  std::vector<T> out;
  out.reserve((*a)->items.size());
  for (const Value& item : (*a)->items) {
    std::optional<T> x = convert(item);
    if (!x) wrong_type(f.path(), key, *v, expected);
    out.push_back(std::move(*x));
  }
  return out;
}

[[noreturn]] void missing(const std::string& path, std::string_view key) {
  throw Error(path + ": required key '" + std::string(key) + "' is missing");
}

}  // namespace

std::optional<std::string> File::get_string(std::string_view key) const {
  const Value* v = find(key);
  if (!v) return std::nullopt;
  const auto* s = std::get_if<std::string>(v);
  if (!s) wrong_type(path_, key, *v, "a string");
  return *s;
}

std::optional<int64_t> File::get_int(std::string_view key) const {
  const Value* v = find(key);
  if (!v) return std::nullopt;
  return checked_integer(path_, key, *v, "an integer");
}

std::optional<double> File::get_float(std::string_view key) const {
  const Value* v = find(key);
  if (!v) return std::nullopt;
  return checked_number(path_, key, *v, "a number");
}

std::optional<bool> File::get_bool(std::string_view key) const {
  const Value* v = find(key);
  if (!v) return std::nullopt;
  const auto* b = std::get_if<bool>(v);
  if (!b) wrong_type(path_, key, *v, "a bool");
  return *b;
}

std::string File::require_string(std::string_view key) const {
  auto v = get_string(key);
  if (!v) missing(path_, key);
  return *v;
}

int64_t File::require_int(std::string_view key) const {
  auto v = get_int(key);
  if (!v) missing(path_, key);
  return *v;
}

double File::require_float(std::string_view key) const {
  auto v = get_float(key);
  if (!v) missing(path_, key);
  return *v;
}

std::optional<std::vector<std::string>> File::get_string_array(std::string_view key) const {
  return convert_array<std::string>(*this, key, "an array of string",
                                    [](const Value& item) -> std::optional<std::string> {
                                      const auto* s = std::get_if<std::string>(&item);
                                      if (!s) return std::nullopt;
                                      return *s;
                                    });
}

std::optional<std::vector<float>> File::get_float_array(std::string_view key) const {
  return convert_array<float>(*this, key, "an array of numbers",
                              [](const Value& item) -> std::optional<float> {
                                const auto d = number_of(item);
                                if (!d) return std::nullopt;
                                return float(*d);
                              });
}

std::optional<std::vector<int64_t>> File::get_int_array(std::string_view key) const {
  const std::string k(key);
  return convert_array<int64_t>(*this, key, "an array of integers",
                                [&](const Value& item) -> std::optional<int64_t> {
                                  const Integer i = integer_of(item);
                                  if (!i.is_integer) return std::nullopt;
                                  if (!i.fits)
                                    throw Error(path_ + ": key '" + k + "' holds a value that does not fit in int64");
                                  return i.value;
                                });
}

}  // namespace hart::gguf
