// The scalar reference kernel set: plain loops, sums of many terms accumulated in double, weight
// rows dequantized block by block through src/quant. Every ISA set is tested against this.
#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <utility>
#include <vector>

#include "backend/cpu/kernels.h"
#include "quant/quant.h"

namespace hart::cpu {
namespace {

float ref_dot_f32(int64_t n, const float* a, const float* b) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; i++) sum += double(a[i]) * double(b[i]);
  return float(sum);
}

// out = dot(dequantized weight row, F32 activations), one block (or 256 floats) at a time.
template <uint32_t T>
void ref_vec_dot(int64_t n, float* out, const void* w, const void* x) {
  constexpr int64_t kChunk = 256;  // a multiple of every block size
  const TypeInfo& ti = type_info(Type(T));
  const int64_t step = ti.quantized ? ti.block_size : kChunk;
  const auto* wb = static_cast<const char*>(w);
  const auto* xf = static_cast<const float*>(x);
  float buf[kChunk];
  double sum = 0.0;
  for (int64_t i = 0; i < n; i += step) {
    const int64_t len = std::min(step, n - i);
    dequantize_row(Type(T), wb + row_size(Type(T), i), buf, len);
    sum += ref_dot_f32(len, buf, xf + i);
  }
  *out = float(sum);
}

// Every (W row, X row) pair through the reference vec_dot.
template <uint32_t T>
void ref_gemm(int64_t n, int64_t nw, int64_t nx, const void* w, size_t w_stride, const void* x, size_t x_stride,
              float* y, size_t y_stride) {
  const auto* wb = static_cast<const char*>(w);
  const auto* xb = static_cast<const char*>(x);
  for (int64_t j = 0; j < nx; j++)
    for (int64_t i = 0; i < nw; i++)
      ref_vec_dot<T>(n, y + size_t(j) * y_stride + size_t(i), wb + size_t(i) * w_stride, xb + size_t(j) * x_stride);
}

template <uint32_t T>
void ref_to_f32(const void* x, float* y, int64_t n) { dequantize_row(Type(T), x, y, n); }

template <uint32_t T>
void ref_from_f32(const float* x, void* y, int64_t n) { quantize_row(Type(T), x, y, n); }

void ref_rms_norm(int64_t n, const float* x, float* y, float eps) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; i++) sum += double(x[i]) * double(x[i]);
  const float s = 1.0f / std::sqrt(float(sum / double(n)) + eps);
  for (int64_t i = 0; i < n; i++) y[i] = x[i] * s;
}

void ref_softmax(int64_t n, float* x) {
  float max = -INFINITY;
  for (int64_t i = 0; i < n; i++) max = std::max(max, x[i]);
  if (max == -INFINITY) {  // every entry masked: no probability mass anywhere
    for (int64_t i = 0; i < n; i++) x[i] = 0.0f;
    return;
  }
  double sum = 0.0;
  for (int64_t i = 0; i < n; i++) sum += (x[i] = std::exp(x[i] - max));
  const float inv = float(1.0 / sum);
  for (int64_t i = 0; i < n; i++) x[i] *= inv;
}

float ref_softmax_block(int64_t n, float* s, float scale, const float* bias, float* m, float* l) {
  float m_new = *m;
  for (int64_t j = 0; j < n; j++) m_new = std::max(m_new, s[j] = s[j] * scale + (bias ? bias[j] : 0.0f));
  if (m_new == -INFINITY) {
    std::fill(s, s + n, 0.0f);
    return 1.0f;
  }
  float sum = 0.0f;
  for (int64_t j = 0; j < n; j++) sum += (s[j] = std::exp(s[j] - m_new));
  const float shrink = std::exp(*m - m_new);
  *l = *l * shrink + sum;
  *m = m_new;
  return shrink;
}

void ref_norm(int64_t n, const float* x, float* y, float eps) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; i++) sum += x[i];
  const float mean = float(sum / double(n));
  double var = 0.0;
  for (int64_t i = 0; i < n; i++) {
    y[i] = x[i] - mean;
    var += double(y[i]) * double(y[i]);
  }
  const float inv = 1.0f / std::sqrt(float(var / double(n)) + eps);
  for (int64_t i = 0; i < n; i++) y[i] *= inv;
}

float ref_wkv7_row(int64_t n, const float* s, float* s_out, const float* w, const float* k, const float* b,
                   const float* r, float v, float sa) {
  float y = 0.0f;
  for (int64_t j = 0; j < n; j++) {
    s_out[j] = s[j] * w[j] + v * k[j] + sa * b[j];
    y += s_out[j] * r[j];
  }
  return y;
}

float ref_delta_row(int64_t n, const float* s, float* s_out, float decay, const float* k, float d, const float* q) {
  float y = 0.0f;
  for (int64_t j = 0; j < n; j++) {
    s_out[j] = s[j] * decay + d * k[j];
    y += s_out[j] * q[j];
  }
  return y;
}

float silu(float x) { return x / (1.0f + std::exp(-x)); }
float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float expf_(float x) { return std::exp(x); }
float tanhf_(float x) { return std::tanh(x); }
float gelu(float x) {
  constexpr float kSqrt2OverPi = 0.79788456080286535588f;
  return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * (1.0f + 0.044715f * x * x)));
}

template <float (*F)(float)>
void ref_map(int64_t n, const float* x, float* y) {
  for (int64_t i = 0; i < n; i++) y[i] = F(x[i]);
}

template <class F>
void zip(int64_t n, const float* a, const float* b, float* y, F f) {
  for (int64_t i = 0; i < n; i++) y[i] = f(a[i], b[i]);
}

void ref_add(int64_t n, const float* a, const float* b, float* y) { zip(n, a, b, y, std::plus<float>()); }
void ref_sub(int64_t n, const float* a, const float* b, float* y) { zip(n, a, b, y, std::minus<float>()); }
void ref_mul(int64_t n, const float* a, const float* b, float* y) { zip(n, a, b, y, std::multiplies<float>()); }
void ref_div(int64_t n, const float* a, const float* b, float* y) { zip(n, a, b, y, std::divides<float>()); }
void ref_clamp(int64_t n, const float* x, float lo, float hi, float* y) {
  for (int64_t i = 0; i < n; i++) y[i] = std::min(std::max(x[i], lo), hi);
}

// A partial sort of the indices by (value descending, index ascending).
void ref_top_k(int64_t n, const float* x, int k, int32_t* idx) {
  std::vector<int32_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [x](int32_t a, int32_t b) {
    const int32_t ka = float_order_key(x[a]), kb = float_order_key(x[b]);
    return ka != kb ? ka > kb : a < b;
  });
  std::copy(order.begin(), order.begin() + k, idx);
}
int64_t ref_argmax(int64_t n, const float* x) {
  int64_t best = -1;
  for (int64_t i = 0; i < n; i++)
    if (!std::isnan(x[i]) && (best < 0 || x[i] > x[best])) best = i;
  return best < 0 ? 0 : best;
}
void ref_swiglu(int64_t n, const float* g, const float* u, float* y) {
  zip(n, g, u, y, [](float a, float b) { return silu(a) * b; });
}
void ref_geglu(int64_t n, const float* g, const float* u, float* y) {
  zip(n, g, u, y, [](float a, float b) { return gelu(a) * b; });
}

void ref_rope(int64_t half, bool neox, const float* cs, const float* sn, const float* x, float* y) {
  for (int64_t i = 0; i < half; i++) {
    const int64_t a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
    const float x0 = x[a], x1 = x[b];
    y[a] = x0 * cs[i] - x1 * sn[i];
    y[b] = x0 * sn[i] + x1 * cs[i];
  }
}

void ref_scale(int64_t n, const float* x, float s, float* y) {
  for (int64_t i = 0; i < n; i++) y[i] = x[i] * s;
}

void ref_axpy(int64_t n, float a, const float* x, float* y) {
  for (int64_t i = 0; i < n; i++) y[i] += a * x[i];
}

void ref_axpy_rows(int64_t n, int64_t m, const float* a, const float* const* x, float* y) {
  for (int64_t j = 0; j < m; j++) ref_axpy(n, a[j], x[j], y);
}

template <uint32_t... T>
void fill_type_tables(Kernels& k, std::integer_sequence<uint32_t, T...>) {
  auto fill_one = [&](uint32_t t, VecDotFn dot, GemmFn gemm, ToF32Fn to, FromF32Fn from) {
    const Type type = Type(t);
    if (!find_type_info(t) || type == Type::I32 || type == Type::I64) return;
    if (can_dequantize(type)) {
      k.to_f32[t] = to;
      k.dot[t] = DotKernel{Type::F32, dot, gemm};
    }
    // Not for IQ2_XXS / IQ2_XS / IQ1_S, whose ggml quantizers need importance weights (a graph's
    // conversion has none).
    if (can_quantize(type) && !quantize_needs_importance(type)) k.from_f32[t] = from;
  };
  (fill_one(T, &ref_vec_dot<T>, &ref_gemm<T>, &ref_to_f32<T>, &ref_from_f32<T>), ...);
}

Kernels make_ref() {
  Kernels k;
  k.name = "ref";
  fill_type_tables(k, std::make_integer_sequence<uint32_t, kTypeCount>());
  k.dot_f32 = ref_dot_f32;
  k.rms_norm = ref_rms_norm;
  k.norm = ref_norm;
  k.softmax = ref_softmax;
  k.softmax_block = ref_softmax_block;
  k.silu = ref_map<silu>;
  k.exp = ref_map<expf_>;
  k.gelu = ref_map<gelu>;
  k.tanh = ref_map<tanhf_>;
  k.sigmoid = ref_map<sigmoid>;
  k.wkv7_row = ref_wkv7_row;
  k.delta_row = ref_delta_row;
  k.swiglu = ref_swiglu;
  k.geglu = ref_geglu;
  k.add = ref_add;
  k.sub = ref_sub;
  k.mul = ref_mul;
  k.div = ref_div;
  k.clamp = ref_clamp;
  k.top_k = ref_top_k;
  k.argmax = ref_argmax;
  k.scale = ref_scale;
  k.axpy = ref_axpy;
  k.axpy_rows = ref_axpy_rows;
  k.rope = ref_rope;
  return k;
}

}  // namespace

const Kernels& ref_kernels() {
  static const Kernels k = make_ref();
  return k;
}

}  // namespace hart::cpu
