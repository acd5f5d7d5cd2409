// RVV row primitives (F32). Vector-length agnostic: every loop is strip-mined with vsetvl, sums
// are kept per lane in a tail-undisturbed accumulator and reduced once per row.
#include <riscv_vector.h>

#include <cmath>
#include <cstring>

#include "backend/cpu/arch/riscv/rvv_math.h"
#include "backend/cpu/arch/riscv/rvv_sets.h"

namespace hart::cpu::riscv {
namespace {

// sum(a[i] * b[i]); a == b gives the sum of squares.
float dot_f32(int64_t n, const float* a, const float* b) {
  vfloat32m4_t acc = zero_lanes();
  for (size_t i = 0, vl; i < size_t(n); i += vl) {
    vl = __riscv_vsetvl_e32m4(size_t(n) - i);
    const vfloat32m4_t va = __riscv_vle32_v_f32m4(a + i, vl);
    const vfloat32m4_t vb = __riscv_vle32_v_f32m4(b + i, vl);
    acc = __riscv_vfmacc_vv_f32m4_tu(acc, va, vb, vl);
  }
  return sum_lanes(acc);
}

// y = x * s
void scale(int64_t n, const float* x, float s, float* y) {
  for (size_t i = 0, vl; i < size_t(n); i += vl) {
    vl = __riscv_vsetvl_e32m8(size_t(n) - i);
    __riscv_vse32_v_f32m8(y + i, __riscv_vfmul_vf_f32m8(__riscv_vle32_v_f32m8(x + i, vl), s, vl), vl);
  }
}

void rms_norm(int64_t n, const float* x, float* y, float eps) {
  const float mean = dot_f32(n, x, x) / float(n);
  scale(n, x, 1.0f / std::sqrt(mean + eps), y);
}

// Layer norm: the mean, then y = x - mean and its sum of squares in one pass, then the scale.
void norm(int64_t n, const float* x, float* y, float eps) {
  vfloat32m4_t acc = zero_lanes();
  for (size_t i = 0, vl; i < size_t(n); i += vl) {
    vl = __riscv_vsetvl_e32m4(size_t(n) - i);
    acc = __riscv_vfadd_vv_f32m4_tu(acc, acc, __riscv_vle32_v_f32m4(x + i, vl), vl);
  }
  const float mean = sum_lanes(acc) / float(n);
  vfloat32m4_t sq = zero_lanes();
  for (size_t i = 0, vl; i < size_t(n); i += vl) {
    vl = __riscv_vsetvl_e32m4(size_t(n) - i);
    const vfloat32m4_t d = __riscv_vfsub_vf_f32m4(__riscv_vle32_v_f32m4(x + i, vl), mean, vl);
    __riscv_vse32_v_f32m4(y + i, d, vl);
    sq = __riscv_vfmacc_vv_f32m4_tu(sq, d, d, vl);
  }
  scale(n, y, 1.0f / std::sqrt(sum_lanes(sq) / float(n) + eps), y);
}

// s_out = s * w + v * k + sa * b, returning dot(s_out, r).
float wkv7_row(int64_t n, const float* s, float* s_out, const float* w, const float* k, const float* b, const float* r,
               float v, float sa) {
  vfloat32m4_t acc = zero_lanes();
  for (size_t i = 0, vl; i < size_t(n); i += vl) {
    vl = __riscv_vsetvl_e32m4(size_t(n) - i);
    vfloat32m4_t ns = __riscv_vfmul_vf_f32m4(__riscv_vle32_v_f32m4(b + i, vl), sa, vl);
    ns = __riscv_vfmacc_vf_f32m4(ns, v, __riscv_vle32_v_f32m4(k + i, vl), vl);
    ns = __riscv_vfmacc_vv_f32m4(ns, __riscv_vle32_v_f32m4(s + i, vl), __riscv_vle32_v_f32m4(w + i, vl), vl);
    __riscv_vse32_v_f32m4(s_out + i, ns, vl);
    acc = __riscv_vfmacc_vv_f32m4_tu(acc, ns, __riscv_vle32_v_f32m4(r + i, vl), vl);
  }
  return sum_lanes(acc);
}

// s_out = s * decay + d * k, returning dot(s_out, q).
float delta_row(int64_t n, const float* s, float* s_out, float decay, const float* k, float d, const float* q) {
  vfloat32m4_t acc = zero_lanes();
  for (size_t i = 0, vl; i < size_t(n); i += vl) {
    vl = __riscv_vsetvl_e32m4(size_t(n) - i);
    vfloat32m4_t ns = __riscv_vfmul_vf_f32m4(__riscv_vle32_v_f32m4(k + i, vl), d, vl);
    ns = __riscv_vfmacc_vf_f32m4(ns, decay, __riscv_vle32_v_f32m4(s + i, vl), vl);
    __riscv_vse32_v_f32m4(s_out + i, ns, vl);
    acc = __riscv_vfmacc_vv_f32m4_tu(acc, ns, __riscv_vle32_v_f32m4(q + i, vl), vl);
  }
  return sum_lanes(acc);
}

// RoPE on one row (Kernels::rope): the pairs' first and second elements as two vectors, from the
// row's two halves (neox) or de-interleaved by a segment load, and stored back the same way.
void rope(int64_t half, bool neox, const float* cs, const float* sn, const float* x, float* y) {
  for (size_t i = 0, vl; i < size_t(half); i += vl) {
    vl = __riscv_vsetvl_e32m2(size_t(half) - i);
    const vfloat32m2_t c = __riscv_vle32_v_f32m2(cs + i, vl), s = __riscv_vle32_v_f32m2(sn + i, vl);
    vfloat32m2_t a, b;
    if (neox) {
      a = __riscv_vle32_v_f32m2(x + i, vl);
      b = __riscv_vle32_v_f32m2(x + size_t(half) + i, vl);
    } else {
      const vfloat32m2x2_t pairs = __riscv_vlseg2e32_v_f32m2x2(x + 2 * i, vl);
      a = __riscv_vget_v_f32m2x2_f32m2(pairs, 0);
      b = __riscv_vget_v_f32m2x2_f32m2(pairs, 1);
    }
    const vfloat32m2_t ya = __riscv_vfsub_vv_f32m2(__riscv_vfmul_vv_f32m2(a, c, vl), __riscv_vfmul_vv_f32m2(b, s, vl), vl);
    const vfloat32m2_t yb = __riscv_vfadd_vv_f32m2(__riscv_vfmul_vv_f32m2(a, s, vl), __riscv_vfmul_vv_f32m2(b, c, vl), vl);
    if (neox) {
      __riscv_vse32_v_f32m2(y + i, ya, vl);
      __riscv_vse32_v_f32m2(y + size_t(half) + i, yb, vl);
    } else {
      __riscv_vsseg2e32_v_f32m2x2(y + 2 * i, __riscv_vcreate_v_f32m2x2(ya, yb), vl);
    }
  }
}

// tanh(x) = 2 / (1 + e^-2x) - 1 (saturating to +-1).
vfloat32m2_t tanh_v(vfloat32m2_t x, size_t vl) {
  const vfloat32m2_t e = exp_f32m2(__riscv_vfmul_vf_f32m2(x, -2.0f, vl), vl);
  return __riscv_vfsub_vf_f32m2(__riscv_vfrdiv_vf_f32m2(__riscv_vfadd_vf_f32m2(e, 1.0f, vl), 2.0f, vl), 1.0f, vl);
}

// Element-wise y = Op(a, b) for the binary operations.
template <vfloat32m8_t (*Op)(vfloat32m8_t, vfloat32m8_t, size_t)>
void binary(int64_t n, const float* a, const float* b, float* y) {
  for (size_t i = 0, vl; i < size_t(n); i += vl) {
    vl = __riscv_vsetvl_e32m8(size_t(n) - i);
    __riscv_vse32_v_f32m8(y + i, Op(__riscv_vle32_v_f32m8(a + i, vl), __riscv_vle32_v_f32m8(b + i, vl), vl), vl);
  }
}

vfloat32m8_t vadd(vfloat32m8_t a, vfloat32m8_t b, size_t vl) { return __riscv_vfadd_vv_f32m8(a, b, vl); }
vfloat32m8_t vsub(vfloat32m8_t a, vfloat32m8_t b, size_t vl) { return __riscv_vfsub_vv_f32m8(a, b, vl); }
vfloat32m8_t vmul(vfloat32m8_t a, vfloat32m8_t b, size_t vl) { return __riscv_vfmul_vv_f32m8(a, b, vl); }
vfloat32m8_t vdiv(vfloat32m8_t a, vfloat32m8_t b, size_t vl) { return __riscv_vfdiv_vv_f32m8(a, b, vl); }

void clamp(int64_t n, const float* x, float lo, float hi, float* y) {
  for (size_t i = 0, vl; i < size_t(n); i += vl) {
    vl = __riscv_vsetvl_e32m8(size_t(n) - i);
    const vfloat32m8_t v = __riscv_vfmax_vf_f32m8(__riscv_vle32_v_f32m8(x + i, vl), lo, vl);
    __riscv_vse32_v_f32m8(y + i, __riscv_vfmin_vf_f32m8(v, hi, vl), vl);
  }
}

// float_order_key() of each loaded float.
vint32m4_t order_keys(const float* p, size_t vl) {
  const vint32m4_t b = __riscv_vle32_v_i32m4(reinterpret_cast<const int32_t*>(p), vl);
  return __riscv_vxor_vv_i32m4(b, __riscv_vand_vx_i32m4(__riscv_vsra_vx_i32m4(b, 31, vl), 0x7fffffff, vl), vl);
}

// top_k by rank: element i lands at position #{j < i: key_j >= key_i} + #{j > i: key_j > key_i}
// (the order of (value desc, index asc), so ranks are distinct).
void top_k(int64_t n, const float* x, int k, int32_t* idx) {
  for (int64_t i = 0; i < n; i++) {
    const int32_t ki = float_order_key(x[i]);
    size_t rank = 0;
    for (size_t j = 0, vl; j < size_t(i) && rank < size_t(k); j += vl) {
      vl = __riscv_vsetvl_e32m4(size_t(i) - j);
      rank += __riscv_vcpop_m_b8(__riscv_vmsge_vx_i32m4_b8(order_keys(x + j, vl), ki, vl), vl);
    }
    for (size_t j = size_t(i) + 1, vl; j < size_t(n) && rank < size_t(k); j += vl) {
      vl = __riscv_vsetvl_e32m4(size_t(n) - j);
      rank += __riscv_vcpop_m_b8(__riscv_vmsgt_vx_i32m4_b8(order_keys(x + j, vl), ki, vl), vl);
    }
    if (rank < size_t(k)) idx[rank] = int32_t(i);
  }
}

// Kernels::argmax: the largest value (vfmax passes NaNs over), then the first index holding it.
int64_t argmax(int64_t n, const float* x) {
  const size_t vlmax = __riscv_vsetvlmax_e32m8();
  vfloat32m8_t m = __riscv_vfmv_v_f_f32m8(-INFINITY, vlmax);
  for (size_t i = 0, vl; i < size_t(n); i += vl) {
    vl = __riscv_vsetvl_e32m8(size_t(n) - i);
    m = __riscv_vfmax_vv_f32m8_tu(m, m, __riscv_vle32_v_f32m8(x + i, vl), vl);
  }
  const float top =
      __riscv_vfmv_f_s_f32m1_f32(__riscv_vfredmax_vs_f32m8_f32m1(m, __riscv_vfmv_s_f_f32m1(-INFINITY, 1), vlmax));
  for (size_t i = 0, vl; i < size_t(n); i += vl) {
    vl = __riscv_vsetvl_e32m8(size_t(n) - i);
    const long lane = __riscv_vfirst_m_b4(__riscv_vmfeq_vf_f32m8_b4(__riscv_vle32_v_f32m8(x + i, vl), top, vl), vl);
    if (lane >= 0) return int64_t(i) + lane;
  }
  return 0;
}

// y += a * x
void axpy(int64_t n, float a, const float* x, float* y) {
  for (size_t i = 0, vl; i < size_t(n); i += vl) {
    vl = __riscv_vsetvl_e32m8(size_t(n) - i);
    const vfloat32m8_t vy = __riscv_vle32_v_f32m8(y + i, vl);
    __riscv_vse32_v_f32m8(y + i, __riscv_vfmacc_vf_f32m8(vy, a, __riscv_vle32_v_f32m8(x + i, vl), vl), vl);
  }
}

// y += sum_j a[j] x[j]: a register group of y takes every row before the next group.
void axpy_rows(int64_t n, int64_t m, const float* a, const float* const* x, float* y) {
  for (size_t i = 0, vl; i < size_t(n); i += vl) {
    vl = __riscv_vsetvl_e32m8(size_t(n) - i);
    vfloat32m8_t acc = __riscv_vle32_v_f32m8(y + i, vl);
    for (int64_t j = 0; j < m; j++) acc = __riscv_vfmacc_vf_f32m8(acc, a[j], __riscv_vle32_v_f32m8(x[j] + i, vl), vl);
    __riscv_vse32_v_f32m8(y + i, acc, vl);
  }
}

// silu(x) = x / (1 + e^-x)
vfloat32m2_t silu_v(vfloat32m2_t x, size_t vl) {
  const vfloat32m2_t e = exp_f32m2(__riscv_vfneg_v_f32m2(x, vl), vl);
  return __riscv_vfdiv_vv_f32m2(x, __riscv_vfadd_vf_f32m2(e, 1.0f, vl), vl);
}

// sigmoid(x) = 1 / (1 + e^-x)
vfloat32m2_t sigmoid_v(vfloat32m2_t x, size_t vl) {
  return __riscv_vfrdiv_vf_f32m2(__riscv_vfadd_vf_f32m2(exp_f32m2(__riscv_vfneg_v_f32m2(x, vl), vl), 1.0f, vl), 1.0f, vl);
}

// A local name for e^x: an address taken of the header's inline function would be a weak symbol.
vfloat32m2_t exp_v(vfloat32m2_t x, size_t vl) { return exp_f32m2(x, vl); }

// ggml's tanh GELU, 0.5 x (1 + tanh(u)) with u = sqrt(2/pi) (x + 0.044715 x^3), computed as
// x / (1 + e^(-2u)): the same function without the cancellation in 1 + tanh(u) for negative u.
vfloat32m2_t gelu_v(vfloat32m2_t x, size_t vl) {
  const vfloat32m2_t x2 = __riscv_vfmul_vv_f32m2(x, x, vl);
  const vfloat32m2_t poly = __riscv_vfmadd_vf_f32m2(x2, 0.044715f, __riscv_vfmv_v_f_f32m2(1.0f, vl), vl);
  const vfloat32m2_t minus_2u = __riscv_vfmul_vv_f32m2(__riscv_vfmul_vf_f32m2(x, -2.0f * 0.7978845608028654f, vl), poly, vl);
  return __riscv_vfdiv_vv_f32m2(x, __riscv_vfadd_vf_f32m2(exp_f32m2(minus_2u, vl), 1.0f, vl), vl);
}

// y = F(x) over a row.
template <vfloat32m2_t (*F)(vfloat32m2_t, size_t)>
void unary(int64_t n, const float* x, float* y) {
  for (size_t i = 0, vl; i < size_t(n); i += vl) {
    vl = __riscv_vsetvl_e32m2(size_t(n) - i);
    __riscv_vse32_v_f32m2(y + i, F(__riscv_vle32_v_f32m2(x + i, vl), vl), vl);
  }
}

// y = F(gate) * up: SwiGLU and GeGLU.
template <vfloat32m2_t (*F)(vfloat32m2_t, size_t)>
void gated(int64_t n, const float* gate, const float* up, float* y) {
  for (size_t i = 0, vl; i < size_t(n); i += vl) {
    vl = __riscv_vsetvl_e32m2(size_t(n) - i);
    const vfloat32m2_t s = F(__riscv_vle32_v_f32m2(gate + i, vl), vl);
    __riscv_vse32_v_f32m2(y + i, __riscv_vfmul_vv_f32m2(s, __riscv_vle32_v_f32m2(up + i, vl), vl), vl);
  }
}

// x[i] = e^(x[i] - max) in place; returns their sum.
float exp_shifted(int64_t n, float* x, float max) {
  vfloat32m2_t acc = __riscv_vfmv_v_f_f32m2(0.0f, __riscv_vsetvlmax_e32m2());
  for (size_t i = 0, vl; i < size_t(n); i += vl) {
    vl = __riscv_vsetvl_e32m2(size_t(n) - i);
    const vfloat32m2_t e = exp_f32m2(__riscv_vfsub_vf_f32m2(__riscv_vle32_v_f32m2(x + i, vl), max, vl), vl);
    __riscv_vse32_v_f32m2(x + i, e, vl);
    acc = __riscv_vfadd_vv_f32m2_tu(acc, acc, e, vl);
  }
  return sum_lanes(acc);
}

// x = e^(x - max) / sum, in place: one pass for the max, one for e^ and the sum, one to scale.
// A row that is all -inf (fully masked) becomes all 0.
void softmax(int64_t n, float* x) {
  if (n <= 0) return;
  vfloat32m1_t red = __riscv_vfmv_s_f_f32m1(x[0], 1);
  for (size_t i = 0, vl; i < size_t(n); i += vl) {
    vl = __riscv_vsetvl_e32m8(size_t(n) - i);
    red = __riscv_vfredmax_vs_f32m8_f32m1(__riscv_vle32_v_f32m8(x + i, vl), red, vl);
  }
  const float max = __riscv_vfmv_f_s_f32m1_f32(red);
  if (max == -INFINITY) {
    std::memset(x, 0, size_t(n) * sizeof(float));
    return;
  }
  scale(n, x, 1.0f / exp_shifted(n, x, max), x);
}

// Kernels::softmax_block: the scaled scores and their max in one pass, the weights and their sum
// in the next.
float softmax_block(int64_t n, float* s, float scale, const float* bias, float* m, float* l) {
  vfloat32m1_t red = __riscv_vfmv_s_f_f32m1(*m, 1);
  for (size_t i = 0, vl; i < size_t(n); i += vl) {
    vl = __riscv_vsetvl_e32m8(size_t(n) - i);
    vfloat32m8_t x = __riscv_vfmul_vf_f32m8(__riscv_vle32_v_f32m8(s + i, vl), scale, vl);
    if (bias) x = __riscv_vfadd_vv_f32m8(x, __riscv_vle32_v_f32m8(bias + i, vl), vl);
    __riscv_vse32_v_f32m8(s + i, x, vl);
    red = __riscv_vfredmax_vs_f32m8_f32m1(x, red, vl);
  }
  const float m_new = __riscv_vfmv_f_s_f32m1_f32(red);
  if (m_new == -INFINITY) {
    std::memset(s, 0, size_t(n) * sizeof(float));
    return 1.0f;
  }
  const float sum = exp_shifted(n, s, m_new);
  const float shrink = std::exp(*m - m_new);
  *l = *l * shrink + sum;
  *m = m_new;
  return shrink;
}

}  // namespace

void fill_rvv_rows(Kernels& k) {
  k.dot_f32 = dot_f32;
  k.rms_norm = rms_norm;
  k.norm = norm;
  k.wkv7_row = wkv7_row;
  k.delta_row = delta_row;
  k.softmax = softmax;
  k.softmax_block = softmax_block;
  k.silu = unary<silu_v>;
  k.gelu = unary<gelu_v>;
  k.tanh = unary<tanh_v>;
  k.sigmoid = unary<sigmoid_v>;
  k.exp = unary<exp_v>;
  k.swiglu = gated<silu_v>;
  k.geglu = gated<gelu_v>;
  k.add = binary<vadd>;
  k.sub = binary<vsub>;
  k.mul = binary<vmul>;
  k.div = binary<vdiv>;
  k.clamp = clamp;
  k.top_k = top_k;
  k.argmax = argmax;
  k.scale = scale;
  k.axpy = axpy;
  k.axpy_rows = axpy_rows;
  k.rope = rope;
}

}  // namespace hart::cpu::riscv
