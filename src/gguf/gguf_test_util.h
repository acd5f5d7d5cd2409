// Test helpers: a byte-level GGUF builder (to craft valid and deliberately broken files the
// Writer would refuse to produce) and a deep comparison of metadata values.
#pragma once

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "gguf/gguf.h"

namespace hart::gguf::testing {

// Little-endian byte sink.
struct Bytes {
  std::vector<uint8_t> b;

  template <class T>
  Bytes& put(T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    b.insert(b.end(), p, p + sizeof v);
    return *this;
  }
  Bytes& str(std::string_view s) {
    put<uint64_t>(s.size());
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  Bytes& raw(const std::vector<uint8_t>& more) {
    b.insert(b.end(), more.begin(), more.end());
    return *this;
  }
};

// One metadata entry: key, value type, and the encoded value.
inline std::vector<uint8_t> kv_raw(std::string_view key, uint32_t type, const std::vector<uint8_t>& value) {
  return Bytes().str(key).put<uint32_t>(type).raw(value).b;
}
inline std::vector<uint8_t> kv_u32(std::string_view key, uint32_t v) {
  return kv_raw(key, uint32_t(ValueType::UINT32), Bytes().put(v).b);
}
inline std::vector<uint8_t> kv_string(std::string_view key, std::string_view v) {
  return kv_raw(key, uint32_t(ValueType::STRING), Bytes().str(v).b);
}

struct RawTensor {
  std::string name;
  std::vector<int64_t> ne;
  uint32_t type;
  uint64_t offset;
};

// A GGUF file spelled out field by field; every field may be set to a broken value.
struct RawFile {
  uint32_t magic = 0x46554747;
  uint32_t version = 3;
  std::optional<uint64_t> n_tensors, n_kv;  // override the true counts
  std::vector<std::vector<uint8_t>> kvs;
  std::vector<RawTensor> tensors;
  uint32_t alignment = kDefaultAlignment;  // pads the data section start (not written as a key)
  size_t data_bytes = 0;                   // bytes of data after the padding (a ramp 0,1,2,...)

  std::vector<uint8_t> bytes() const {
    Bytes out;
    out.put(magic).put(version);
    out.put<uint64_t>(n_tensors.value_or(tensors.size())).put<uint64_t>(n_kv.value_or(kvs.size()));
    for (const auto& kv : kvs) out.raw(kv);
    for (const RawTensor& t : tensors) {
      out.str(t.name).put<uint32_t>(uint32_t(t.ne.size()));
      for (int64_t n : t.ne) out.put(n);
      out.put(t.type).put(t.offset);
    }
    while (out.b.size() % alignment) out.b.push_back(0);
    for (size_t i = 0; i < data_bytes; i++) out.b.push_back(uint8_t(i));
    return out.b;
  }
};

// A small valid file: two keys and two tensors (F32 [8,2] at 0, Q8_0 [32,1] at 64).
inline RawFile small_raw_file() {
  RawFile f;
  f.kvs = {kv_string("general.architecture", "llama"), kv_u32("test.count", 7)};
  f.tensors = {{"a", {8, 2}, uint32_t(Type::F32), 0}, {"b", {32, 1}, uint32_t(Type::Q8_0), 64}};
  f.data_bytes = 64 + 34;
  return f;
}

// Deep equality: arrays by contents, floats by bits (so NaN payloads count too).
inline bool same_value(const Value& a, const Value& b) {
  if (a.index() != b.index()) return false;
  return std::visit(
      [&](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        const T& y = std::get<T>(b);
        if constexpr (std::is_same_v<T, std::shared_ptr<Array>>) {
          if (x->elem_type != y->elem_type || x->items.size() != y->items.size()) return false;
          for (size_t i = 0; i < x->items.size(); i++)
            if (!same_value(x->items[i], y->items[i])) return false;
          return true;
        } else if constexpr (std::is_floating_point_v<T>) {
          return std::memcmp(&x, &y, sizeof x) == 0;
        } else {
          return x == y;
        }
      },
      a);
}

inline Value array_of(ValueType elem, std::vector<Value> items) {
  return std::make_shared<Array>(Array{elem, std::move(items)});
}

}  // namespace hart::gguf::testing
