// Tensor element types with ggml's numbering and block layouts, so GGUF tensors are used in
// place. `type_info` knows every ggml type (a GGUF reader must size any tensor it meets);
// `type_supported` says which ones hart can compute with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "common/fp16.h"

namespace hart {

enum class Type : uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
  Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15,
  IQ2_XXS = 16, IQ2_XS = 17, IQ3_XXS = 18, IQ1_S = 19, IQ4_NL = 20, IQ3_S = 21, IQ2_S = 22,
  IQ4_XS = 23, I8 = 24, I16 = 25, I32 = 26, I64 = 27, F64 = 28, IQ1_M = 29, BF16 = 30,
  TQ1_0 = 34, TQ2_0 = 35, MXFP4 = 39,
};
constexpr uint32_t kTypeCount = 40;  // one past the largest ggml type number

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

// Types hart can dequantize and compute with (the engine's supported set).
bool type_supported(Type t);

// Bytes for a row of n elements; n must be a multiple of the block size.
inline size_t row_size(Type t, int64_t n) {
  const TypeInfo& ti = type_info(t);
  return size_t(n / ti.block_size) * ti.type_size;
}

// ---- block layouts (identical to ggml's) ----------------------------------------------------
constexpr int QK4_0 = 32, QK4_1 = 32, QK5_0 = 32, QK5_1 = 32, QK8_0 = 32, QK8_1 = 32;
constexpr int QK4_NL = 32;
constexpr int QK_K = 256, K_SCALE_SIZE = 12;

struct block_q4_0 { fp16_t d; uint8_t qs[QK4_0 / 2]; };
struct block_q4_1 { fp16_t d, m; uint8_t qs[QK4_1 / 2]; };
struct block_q5_0 { fp16_t d; uint8_t qh[4]; uint8_t qs[QK5_0 / 2]; };
struct block_q5_1 { fp16_t d, m; uint8_t qh[4]; uint8_t qs[QK5_1 / 2]; };
struct block_q8_0 { fp16_t d; int8_t qs[QK8_0]; };
struct block_q8_1 { fp16_t d, s; int8_t qs[QK8_1]; };  // s = d * sum(qs)
struct block_iq4_nl { fp16_t d; uint8_t qs[QK4_NL / 2]; };
struct block_q2_K { uint8_t scales[QK_K / 16]; uint8_t qs[QK_K / 4]; fp16_t d, dmin; };
struct block_q3_K { uint8_t hmask[QK_K / 8]; uint8_t qs[QK_K / 4]; uint8_t scales[12]; fp16_t d; };
struct block_q4_K { fp16_t d, dmin; uint8_t scales[K_SCALE_SIZE]; uint8_t qs[QK_K / 2]; };
struct block_q5_K { fp16_t d, dmin; uint8_t scales[K_SCALE_SIZE]; uint8_t qh[QK_K / 8]; uint8_t qs[QK_K / 2]; };
struct block_q6_K { uint8_t ql[QK_K / 2]; uint8_t qh[QK_K / 4]; int8_t scales[QK_K / 16]; fp16_t d; };
struct block_q8_K { float d; int8_t qs[QK_K]; int16_t bsums[QK_K / 16]; };
struct block_iq4_xs { fp16_t d; uint16_t scales_h; uint8_t scales_l[QK_K / 64]; uint8_t qs[QK_K / 2]; };

static_assert(sizeof(block_q4_0) == 18 && sizeof(block_q4_1) == 20);
static_assert(sizeof(block_q5_0) == 22 && sizeof(block_q5_1) == 24);
static_assert(sizeof(block_q8_0) == 34 && sizeof(block_q8_1) == 36 && sizeof(block_iq4_nl) == 18);
static_assert(sizeof(block_q2_K) == 84 && sizeof(block_q3_K) == 110);
static_assert(sizeof(block_q4_K) == 144 && sizeof(block_q5_K) == 176 && sizeof(block_q6_K) == 210);
static_assert(sizeof(block_q8_K) == 292 && sizeof(block_iq4_xs) == 136);

}  // namespace hart
