// The plain float types F32, F16 and BF16: element-wise conversion, and a dot product that (like
// ggml's scalar one) multiplies in float and accumulates in double.
#include "common/fp16.h"
#include "quant/codec.h"

namespace hart::quant {
namespace {

float from_f32(float f) { return f; }
float to_f32(float f) { return f; }

template <class T, float (*ToF32)(T)>
void dequantize(const void* src, float* dst, int64_t n) {
  const T* s = static_cast<const T*>(src);
  for (int64_t i = 0; i < n; i++) dst[i] = ToF32(s[i]);
}

template <class T, T (*FromF32)(float)>
void quantize(const float* src, void* dst, int64_t n) {
  T* d = static_cast<T*>(dst);
  for (int64_t i = 0; i < n; i++) d[i] = FromF32(src[i]);
}

template <class T, float (*ToF32)(T)>
void vec_dot(int64_t n, float* out, const void* w, const void* x) {
  const T* a = static_cast<const T*>(w);
  const T* b = static_cast<const T*>(x);
  double sum = 0;
  for (int64_t i = 0; i < n; i++) sum += double(ToF32(a[i]) * ToF32(b[i]));
  *out = float(sum);
}

template <class T, float (*ToF32)(T), T (*FromF32)(float), Type type>
Codec plain_codec() {
  return {.dequantize = dequantize<T, ToF32>,
          .quantize = quantize<T, FromF32>,
          .dot_type = type,
          .vec_dot = vec_dot<T, ToF32>};
}

}  // namespace

Codec codec_f32() { return plain_codec<float, from_f32, to_f32, Type::F32>(); }
Codec codec_f16() { return plain_codec<fp16_t, fp16_to_f32, f32_to_fp16, Type::F16>(); }
Codec codec_bf16() { return plain_codec<bf16_t, bf16_to_f32, f32_to_bf16, Type::BF16>(); }

}  // namespace hart::quant
