// Internal: what each tensor type provides to the dispatch table in quant.cpp. Every type's
// translation unit (f16.cpp, q4_0.cpp, ...) defines one `codec_<type>()` factory.
#pragma once

#include <cstdint>

#include "types/tensor_type.h"

namespace hart::quant {

struct Codec {
  void (*dequantize)(const void* src, float* dst, int64_t n) = nullptr;
  void (*quantize)(const float* src, void* dst, int64_t n) = nullptr;
  // ggml's quantizer given per-column importance weights (n values, an imatrix row), for the
  // types whose ggml quantizer uses them; `quantize` alone means the weights make no difference.
  // A codec with only this one cannot quantize without weights (ggml asserts it has them).
  void (*quantize_weighted)(const float* src, void* dst, int64_t n, const float* importance) = nullptr;
  Type dot_type = Type::F32;  // the activation type vec_dot pairs with
  void (*vec_dot)(int64_t n, float* out, const void* w, const void* x) = nullptr;
};

Codec codec_f32();
Codec codec_f16();
Codec codec_bf16();
Codec codec_q4_0();
Codec codec_q4_1();
Codec codec_q5_0();
Codec codec_q5_1();
Codec codec_q8_0();
Codec codec_q8_1();
Codec codec_q2_k();
Codec codec_q3_k();
Codec codec_q4_k();
Codec codec_q5_k();
Codec codec_q6_k();
Codec codec_q8_k();
Codec codec_iq4_nl();
Codec codec_iq4_xs();
Codec codec_tq1_0();
Codec codec_tq2_0();
Codec codec_mxfp4();
Codec codec_q1_0();
Codec codec_q2_0();
Codec codec_iq2_xxs();
Codec codec_iq2_xs();
Codec codec_iq2_s();
Codec codec_iq3_xxs();
Codec codec_iq3_s();
Codec codec_iq1_s();
Codec codec_iq1_m();

// The largest magnitude among n values and the signed value that has it (the first one on ties),
// as ggml's symmetric quantizers pick their scale.
struct AbsMax {
  float amax = 0, max = 0;
};
inline AbsMax abs_max(const float* x, int n) {
  AbsMax r;
  for (int j = 0; j < n; j++) {
    const float a = x[j] < 0 ? -x[j] : x[j];
    if (r.amax < a) r = {a, x[j]};
  }
  return r;
}

// Apply f to each of the n / QK blocks of a row: f(block, floats of that block).
template <class Block, int QK, class F>
inline void for_each_block(const void* blocks, float* x, int64_t n, F f) {
  const Block* b = static_cast<const Block*>(blocks);
  for (int64_t i = 0; i < n / QK; i++) f(b[i], x + i * QK);
}
template <class Block, int QK, class F>
inline void for_each_block(const float* x, void* blocks, int64_t n, F f) {
  Block* b = static_cast<Block*>(blocks);
  for (int64_t i = 0; i < n / QK; i++) f(x + i * QK, b[i]);
}

}  // namespace hart::quant
