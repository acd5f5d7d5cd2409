// Reference (scalar) conversion between F32 and every supported tensor type, bit-exact with
// ggml's dequantization, plus the scalar integer dot products that optimized kernels are held to.
// One weight type per translation unit (f16.cpp, q4_0.cpp, q4_k.cpp, ...).
#pragma once

#include <cstdint>

#include "types/tensor_type.h"

namespace hart {

// Types hart can dequantize and compute with (the engine's supported set).
bool type_supported(Type t);
bool can_dequantize(Type t);
bool can_quantize(Type t);

// n must be a multiple of the type's block size. Throw hart::Error for unsupported types.
void dequantize_row(Type t, const void* src, float* dst, int64_t n);
// importance: n per-column weights (a row of an importance matrix, llama-imatrix's mean squared
// activations) for the types whose ggml quantizer takes them, or nullptr.
void quantize_row(Type t, const float* src, void* dst, int64_t n, const float* importance = nullptr);
// ggml's quantizer of t needs importance weights (ggml_quantize_requires_imatrix).
bool quantize_needs_importance(Type t);

// The activation type a weight type's integer dot product pairs with, as in ggml:
// Q8_0 for Q4_0/Q5_0/Q8_0/IQ4_NL/MXFP4/Q1_0/Q2_0, Q8_1 for Q4_1/Q5_1, Q8_K for the K-quants, IQ4_XS and
// the ternary TQ1_0/TQ2_0, and the
// type itself for F32/F16/BF16.
Type vec_dot_type(Type weight);
// out = dot(weight row w (type `weight`, n elements), activation row x (type vec_dot_type(weight))).
void vec_dot(Type weight, int64_t n, float* out, const void* w, const void* x);

}  // namespace hart
