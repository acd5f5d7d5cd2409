// Tensor element types with ggml's numbering, names and block sizes, so GGUF tensors are used in
// place. `type_info` knows every ggml type (a GGUF reader must size any tensor it meets); the
// block layouts and conversions of the types hart computes with are src/quant's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace hart {

enum class Type : uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
  Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15,
  IQ2_XXS = 16, IQ2_XS = 17, IQ3_XXS = 18, IQ1_S = 19, IQ4_NL = 20, IQ3_S = 21, IQ2_S = 22,
  IQ4_XS = 23, I8 = 24, I16 = 25, I32 = 26, I64 = 27, F64 = 28, IQ1_M = 29, BF16 = 30,
  TQ1_0 = 34, TQ2_0 = 35, MXFP4 = 39, NVFP4 = 40, Q1_0 = 41, Q2_0 = 42,
};
constexpr uint32_t kTypeCount = 43;  // one past the largest ggml type number

struct TypeInfo {
  std::string_view name;  // ggml's name: "f32", "q4_0", "q4_K", ...
  int64_t block_size;     // elements per block (1 for plain types)
  size_t type_size;       // bytes per block
  bool quantized;
};

// nullopt for numbers ggml never assigned or has since removed.
std::optional<TypeInfo> find_type_info(uint32_t type);
const TypeInfo& type_info(Type t);  // t must be a known type
std::string_view type_name(Type t);
std::optional<Type> type_from_name(std::string_view name);  // case-insensitive ("Q4_K", "q4_k")

// Bytes for a row of n elements; n must be a multiple of the block size.
inline size_t row_size(Type t, int64_t n) {
  const TypeInfo& ti = type_info(t);
  return size_t(n / ti.block_size) * ti.type_size;
}

}  // namespace hart
