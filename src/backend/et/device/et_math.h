/* Device math: the ET minion has no float divide, square root or transcendental instructions we
 * may rely on, and no libm. Everything here is multiplications, additions, int32<->float
 * conversions and bit manipulation. Accuracy: a few ulp over the documented domains. */
#ifndef ET_MATH_H
#define ET_MATH_H

#include <stdint.h>

typedef union et_f32_bits {
  float f;
  uint32_t u;
} et_f32_bits;

static inline uint32_t et_bits(float f) {
  et_f32_bits b;
  b.f = f;
  return b.u;
}

static inline float et_float(uint32_t u) {
  et_f32_bits b;
  b.u = u;
  return b.f;
}

static inline float et_inf(void) { return et_float(0x7f800000u); }
static inline float et_nan(void) { return et_float(0x7fc00000u); }
static inline float et_fabs(float x) { return et_float(et_bits(x) & 0x7fffffffu); }
static inline float et_fmax(float a, float b) { return a > b ? a : b; }
static inline float et_fmin(float a, float b) { return a < b ? a : b; }

/* 2^n as a float for -126 <= n <= 127. */
static inline float et_pow2i(int32_t n) { return et_float((uint32_t)(n + 127) << 23); }

/* Round to nearest integer, ties away from zero; |x| < 2^31. */
static inline int32_t et_round_i32(float x) { return (int32_t)(x >= 0.0f ? x + 0.5f : x - 0.5f); }

/* 1/x: a bit-trick estimate refined by three Newton steps (error 12% -> 2e-8 relative).
 * 1/0 = inf with the sign of x; |x| >= 2^126 gives a signed zero (the true result is subnormal). */
static inline float et_recip(float x) {
  const uint32_t sign = et_bits(x) & 0x80000000u;
  const uint32_t ax = et_bits(x) & 0x7fffffffu;
  if (ax > 0x7f800000u) return x;
  if (ax >= 0x7e800000u) return et_float(sign);
  if (ax < 0x00800000u) return et_float(sign | 0x7f800000u); /* zero or subnormal */
  const float a = et_float(ax);
  float y = et_float(0x7ef311c7u - ax);
  y = y * (2.0f - a * y);
  y = y * (2.0f - a * y);
  y = y * (2.0f - a * y);
  return et_float(et_bits(y) | sign);
}

static inline float et_div(float a, float b) { return a * et_recip(b); }

/* 1/sqrt(x) for x > 0 (0 -> inf, negative -> NaN). */
static inline float et_rsqrt(float x) {
  if (!(x > 0.0f)) return x == 0.0f ? et_inf() : et_nan();
  if (x == et_inf()) return 0.0f;
  float scale = 1.0f;
  if (et_bits(x) < 0x00800000u) { /* subnormal: scale up by 2^24, result by 2^12 */
    x *= 16777216.0f;
    scale = 4096.0f;
  }
  const float half = 0.5f * x;
  float y = et_float(0x5f375a86u - (et_bits(x) >> 1));
  y = y * (1.5f - half * y * y);
  y = y * (1.5f - half * y * y);
  y = y * (1.5f - half * y * y);
  return y * scale;
}

static inline float et_sqrt(float x) {
  if (x == 0.0f || x == et_inf()) return x;
  return x * et_rsqrt(x);
}

/* e^x: x = n ln2 + r with |r| <= ln2/2, e^r by a degree-7 Taylor polynomial, times 2^n. */
static inline float et_exp(float x) {
  if (x != x) return x;
  if (x > 88.72f) return et_inf();
  if (x < -87.33f) return 0.0f;
  const int32_t n = et_round_i32(x * 1.44269504088896341f);
  const float fn = (float)n;
  const float r = (x - fn * 0.693145751953125f) - fn * 1.42860682030941723212e-6f;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  if (n == 128) return p * 2.0f * et_pow2i(127);
  return p * et_pow2i(n);
}

/* Natural log: x = m 2^e with m in [sqrt(1/2), sqrt(2)), log m = 2 atanh((m-1)/(m+1)). */
static inline float et_log(float x) {
  if (x != x) return x;
  if (x < 0.0f) return et_nan();
  if (x == 0.0f) return -et_inf();
  if (x == et_inf()) return x;
  int32_t e = 0;
  if (et_bits(x) < 0x00800000u) { /* subnormal */
    x *= 16777216.0f;
    e = -24;
  }
  uint32_t u = et_bits(x);
  e += (int32_t)(u >> 23) - 127;
  float m = et_float((u & 0x007fffffu) | 0x3f800000u);
  if (m > 1.41421356f) {
    m *= 0.5f;
    e += 1;
  }
  const float s = (m - 1.0f) * et_recip(m + 1.0f);
  const float s2 = s * s;
  float p = 1.0f / 9.0f;
  p = p * s2 + 1.0f / 7.0f;
  p = p * s2 + 1.0f / 5.0f;
  p = p * s2 + 1.0f / 3.0f;
  p = p * s2 + 1.0f;
  const float fe = (float)e;
  return 2.0f * s * p + fe * 0.693147180559945309f;
}

/* a^b = e^(b log a) for a > 0; 0^b = 0 for b > 0 and inf for b < 0; 1 when b == 0. */
static inline float et_pow(float a, float b) {
  if (b == 0.0f) return 1.0f;
  if (a == 0.0f) return b > 0.0f ? 0.0f : et_inf();
  if (a < 0.0f) return et_nan();
  return et_exp(b * et_log(a));
}

static inline float et_silu(float x) { return x * et_recip(1.0f + et_exp(-x)); }

/* 1 / (1 + e^-x): 0 once e^-x overflows (x < -88.7), as 1 / (1 + inf) is. */
static inline float et_sigmoid(float x) { return et_recip(1.0f + et_exp(-x)); }

/* log(1 + e^x), and x itself above 20 as the CPU and ggml compute it: there the two agree in float,
 * and beyond 88.7 e^x would overflow to an infinite result. */
static inline float et_softplus(float x) { return x > 20.0f ? x : et_log(1.0f + et_exp(x)); }

/* tanh z, odd: for |z| < 1/2 its Taylor series to z^13 (the form below loses the low bits of a
 * small result to the subtraction from 1), beyond 1 - 2 / (e^2|z| + 1). */
static inline float et_tanh(float z) {
  const float az = et_fabs(z);
  if (az < 0.5f) {
    const float z2 = z * z;
    float p = 21844.0f / 6081075.0f;
    p = p * z2 - 1382.0f / 155925.0f;
    p = p * z2 + 62.0f / 2835.0f;
    p = p * z2 - 17.0f / 315.0f;
    p = p * z2 + 2.0f / 15.0f;
    p = p * z2 - 1.0f / 3.0f;
    return z + z * z2 * p;
  }
  const float t = 1.0f - 2.0f * et_recip(et_exp(2.0f * az) + 1.0f);
  return z < 0.0f ? -t : t;
}

/* GELU, tanh form (as ggml): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
static inline float et_gelu(float x) {
  const float z = 0.79788456080286535588f * x * (1.0f + 0.044715f * x * x);
  return 0.5f * x * (1.0f + et_tanh(z));
}

/* e^x - 1, keeping the relative precision of a small result (e^x - 1 would cancel it): below 1/2
 * its Taylor series to x^10, x (1 + x/2 (1 + x/3 (1 + ...))). */
static inline float et_expm1(float x) {
  if (et_fabs(x) >= 0.5f) return et_exp(x) - 1.0f;
  static const float inv[11] = {0, 0, 1.0f / 2, 1.0f / 3, 1.0f / 4, 1.0f / 5, 1.0f / 6, 1.0f / 7, 1.0f / 8, 1.0f / 9, 1.0f / 10};
  float p = 1.0f;
  for (int i = 10; i >= 2; i--) p = 1.0f + x * p * inv[i];
  return x * p;
}

/* erf x, odd: Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7) for |x| >= 0.5, below
 * that its Maclaurin series to x^11 (relative precision where the value is small). */
static inline float et_erf(float x) {
  const float ax = et_fabs(x);
  if (ax < 0.5f) {
    const float x2 = x * x;
    float p = -1.0f / 1320.0f;
    p = p * x2 + 1.0f / 216.0f;
    p = p * x2 - 1.0f / 42.0f;
    p = p * x2 + 1.0f / 10.0f;
    p = p * x2 - 1.0f / 3.0f;
    p = p * x2 + 1.0f;
    return 1.12837916709551257f * x * p;
  }
  const float t = et_recip(1.0f + 0.3275911f * ax);
  float p = 1.061405429f;
  p = p * t - 1.453152027f;
  p = p * t + 1.421413741f;
  p = p * t - 0.284496736f;
  p = p * t + 0.254829592f;
  const float y = 1.0f - p * t * et_exp(-ax * ax);
  return x < 0.0f ? -y : y;
}

/* Rounding to an integer value: floats of magnitude 2^23 and above (and inf, NaN) already are one. */
static inline float et_trunc(float x) { return et_fabs(x) < 8388608.0f ? (float)(int32_t)x : x; }
static inline float et_floor(float x) {
  const float t = et_trunc(x);
  return t > x ? t - 1.0f : t;
}
static inline float et_ceil(float x) {
  const float t = et_trunc(x);
  return t < x ? t + 1.0f : t;
}
/* Half away from zero, as roundf: x - trunc(x) is exact below 2^23. */
static inline float et_roundf(float x) {
  const float t = et_trunc(x);
  const float f = x - t;
  return f >= 0.5f ? t + 1.0f : f <= -0.5f ? t - 1.0f : t;
}

/* sin and cos together: x = k pi/2 + r (three-part pi/2), |r| <= pi/4, Taylor polynomials, then
 * the quadrant k mod 4 picks and signs them. |x| < 2^24 or so keeps k exact. */
static inline void et_sincos(float x, float* s, float* c) {
  const int32_t k = et_round_i32(x * 0.636619772367581343f);
  const float fk = (float)k;
  const float r = ((x - fk * 1.5703125f) - fk * 4.83751296997070312e-4f) - fk * 7.54978995489188216e-8f;
  const float r2 = r * r;
  float ps = -1.0f / 5040.0f;
  ps = ps * r2 + 1.0f / 120.0f;
  ps = ps * r2 - 1.0f / 6.0f;
  const float sr = r + r * r2 * ps;
  float pc = 1.0f / 40320.0f;
  pc = pc * r2 - 1.0f / 720.0f;
  pc = pc * r2 + 1.0f / 24.0f;
  pc = pc * r2 - 0.5f;
  const float cr = 1.0f + r2 * pc;
  switch (k & 3) {
    case 0: *s = sr; *c = cr; break;
    case 1: *s = cr; *c = -sr; break;
    case 2: *s = -sr; *c = -cr; break;
    default: *s = -cr; *c = sr; break;
  }
}

/* IEEE half <-> float with round-to-nearest-even (bit-identical to ggml's conversions). */
static inline float et_f16_to_f32(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t man = h & 0x3ffu;
  if (exp == 0x1f) return et_float(sign | 0x7f800000u | (man << 13));
  if (exp != 0) return et_float(sign | ((exp + 112) << 23) | (man << 13));
  if (man == 0) return et_float(sign);
  const float v = (float)(int32_t)man * 5.9604644775390625e-8f; /* man * 2^-24, exact */
  return sign ? -v : v;
}

static inline uint16_t et_f32_to_f16(float f) {
  const uint32_t x = et_bits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);
  if (ax < 0x38800000u) { /* subnormal half or zero */
    if (ax < 0x33000000u) return (uint16_t)sign;
    const uint32_t e = ax >> 23;
    const uint32_t m = (ax & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;
    uint32_t h = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) h++;
    return (uint16_t)(sign | h);
  }
  uint32_t h = (ax >> 13) - (112u << 10);
  const uint32_t rem = ax & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) h++;
  return (uint16_t)(sign | h);
}

#endif
