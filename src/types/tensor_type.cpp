#include "types/tensor_type.h"

#include <array>
#include <cctype>

#include "common/error.h"

namespace hart {
namespace {

struct Entry {
  bool known;
  TypeInfo info;
};

constexpr std::array<Entry, kTypeCount> make_table() {
  std::array<Entry, kTypeCount> t{};
  auto set = [&](Type type, std::string_view name, int64_t bs, size_t ts, bool q) {
    t[uint32_t(type)] = Entry{true, TypeInfo{name, bs, ts, q}};
  };
  set(Type::F32, "f32", 1, 4, false);
  set(Type::F16, "f16", 1, 2, false);
  set(Type::Q4_0, "q4_0", 32, 18, true);
  set(Type::Q4_1, "q4_1", 32, 20, true);
  set(Type::Q5_0, "q5_0", 32, 22, true);
  set(Type::Q5_1, "q5_1", 32, 24, true);
  set(Type::Q8_0, "q8_0", 32, 34, true);
  set(Type::Q8_1, "q8_1", 32, 36, true);
  set(Type::Q2_K, "q2_K", 256, 84, true);
  set(Type::Q3_K, "q3_K", 256, 110, true);
  set(Type::Q4_K, "q4_K", 256, 144, true);
  set(Type::Q5_K, "q5_K", 256, 176, true);
  set(Type::Q6_K, "q6_K", 256, 210, true);
  set(Type::Q8_K, "q8_K", 256, 292, true);
  set(Type::IQ2_XXS, "iq2_xxs", 256, 66, true);
  set(Type::IQ2_XS, "iq2_xs", 256, 74, true);
  set(Type::IQ3_XXS, "iq3_xxs", 256, 98, true);
  set(Type::IQ1_S, "iq1_s", 256, 50, true);
  set(Type::IQ4_NL, "iq4_nl", 32, 18, true);
  set(Type::IQ3_S, "iq3_s", 256, 110, true);
  set(Type::IQ2_S, "iq2_s", 256, 82, true);
  set(Type::IQ4_XS, "iq4_xs", 256, 136, true);
  set(Type::I8, "i8", 1, 1, false);
  set(Type::I16, "i16", 1, 2, false);
  set(Type::I32, "i32", 1, 4, false);
  set(Type::I64, "i64", 1, 8, false);
  set(Type::F64, "f64", 1, 8, false);
  set(Type::IQ1_M, "iq1_m", 256, 56, true);
  set(Type::BF16, "bf16", 1, 2, false);
  set(Type::TQ1_0, "tq1_0", 256, 54, true);
  set(Type::TQ2_0, "tq2_0", 256, 66, true);
  set(Type::MXFP4, "mxfp4", 32, 17, true);
  set(Type::NVFP4, "nvfp4", 64, 36, true);
  set(Type::Q1_0, "q1_0", 128, 18, true);
  set(Type::Q2_0, "q2_0", 64, 18, true);
  return t;
}

constexpr auto kTable = make_table();

bool iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++)
    if (std::tolower((unsigned char)a[i]) != std::tolower((unsigned char)b[i])) return false;
  return true;
}

}  // namespace

std::optional<TypeInfo> find_type_info(uint32_t type) {
  if (type >= kTypeCount || !kTable[type].known) return std::nullopt;
  return kTable[type].info;
}

const TypeInfo& type_info(Type t) {
  const uint32_t i = uint32_t(t);
  if (i >= kTypeCount || !kTable[i].known) throw Error("unknown tensor type " + std::to_string(i));
  return kTable[i].info;
}

std::string_view type_name(Type t) { return type_info(t).name; }

std::optional<Type> type_from_name(std::string_view name) {
  for (uint32_t i = 0; i < kTypeCount; i++)
    if (kTable[i].known && iequal(kTable[i].info.name, name)) return Type(i);
  return std::nullopt;
}

}  // namespace hart
