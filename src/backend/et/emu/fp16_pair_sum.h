// TensorFMA16A32's arithmetic as the chip does it, bit for bit (the behaviour sw-sysemu models in
// fpu/tensors.cpp's f1632_mulAdd2 / f1632_mulAdd3; the algorithm restated here from that model):
// each fp16 product is exact (22 bits, never rounded), then the two products and the accumulator
// go through one adder whose datapath is narrower than an exact sum: the addends are aligned to
// the largest exponent keeping 3 bits below the product's last bit and one sticky bit, a
// subtrahend is negated in that format (with the sticky bit folded in differently for the second
// product and the accumulator), and the sum is normalized and rounded toward zero once. The
// result is not always the exact sum rounded toward zero: it differs in the last place when
// bits fall below the datapath (the reason sysemu and an exact model part, and why the emulator
// uses this one). Subnormal fp16 operands and a subnormal accumulator are read as zeros, and a
// tiny result flushes to zero (sysemu's softfloat under SOFTFLOAT_DENORMALS_TO_ZERO); a NaN
// anywhere, or inf - inf, gives the default NaN 0x7fc00000.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace hart::et::emu::chip_fp16 {

// Word layout of a value (f32 fields): sign bit 31, exponent 30..23, significand 22..0.
inline constexpr uint32_t kDefaultNan = 0x7fc00000u;

[[gnu::always_inline]] inline uint32_t exp_of(uint32_t w) { return w >> 23 & 0xff; }

// Shifts right by dist (> 0), OR-ing whatever falls off into bit 0.
[[gnu::always_inline]] inline uint64_t shift_right_sticky(uint64_t v, uint32_t dist) {
  const uint32_t a = uint32_t(v);
  if (dist >= 31) return a != 0;
  return (a >> dist) | uint32_t(uint32_t(a << (32 - dist)) != 0);
}

// The exact product of fp16 a and b in an f32-like word: the exponent field e = ea + eb + 97 (f32
// bias: the value is 2^(e - 127) * sig / 2^20) and the whole 21-22 bit significand product, its
// leading bit included, in bits 21..0. Zero, inf and NaN as f32 words (inf * 0 is the default
// NaN). Subnormal operands are zeros of their sign.
[[gnu::always_inline]] inline uint32_t product(uint16_t a, uint16_t b) {
  const uint32_t sign = uint32_t((a ^ b) & 0x8000) << 16;
  const uint32_t ea = a >> 10 & 0x1f, eb = b >> 10 & 0x1f, ma = a & 0x3ff, mb = b & 0x3ff;
  if (ea == 0x1f || eb == 0x1f) {
    if ((ea == 0x1f && ma) || (eb == 0x1f && mb)) return kDefaultNan;
    if (ea == 0 || eb == 0) return kDefaultNan;  // inf * 0 (a subnormal is a zero here)
    return sign | 0x7f800000u;
  }
  if (ea == 0 || eb == 0) return sign;
  return sign | (ea + eb + 97) << 23 | (ma | 0x400) * (mb | 0x400);
}

// Rounds toward zero and packs sign, exponent and a significand with its leading bit at 30.
[[gnu::always_inline]] inline uint32_t pack_toward_zero(uint32_t sign, int32_t exp, uint64_t sig) {
  const uint32_t s = sign << 31;
  if (exp < 0) return s;                                    // tiny: flushed
  if (exp > 0xfd || (exp == 0xfd && sig >= 0x80000000u)) return s + 0x7f7fffffu;  // the largest finite
  const uint32_t m = uint32_t(sig >> 7);
  return s + (m ? uint32_t(exp) << 23 : 0) + m;
}

// A non-first step: p1 + p2 + c (c a real f32 word), one pass through the chip's adder.
inline uint32_t sum3(uint32_t p1, uint32_t p2, uint32_t c) {
  if ((c & 0x7f800000u) == 0) c &= 0x80000000u;  // a subnormal accumulator is a zero
  uint32_t sa = p1 >> 31, sb = p2 >> 31, sc = c >> 31;
  int32_t ea = int32_t(exp_of(p1)), eb = int32_t(exp_of(p2)), ec = int32_t(exp_of(c));
  uint64_t ma = uint64_t(p1 & 0x7fffff) << 3, mb = uint64_t(p2 & 0x7fffff) << 3, mc = c & 0x7fffff;
  if (ec != 0) {
    if (ec != 0xff) mc |= 0x800000;
  } else {
    ec = mc != 0;
  }
  // The operand of the largest exponent leads (the accumulator on a tie, then the first product).
  const auto swap_with_a = [&](uint32_t& s, int32_t& e, uint64_t& m) {
    const uint32_t ts = sa;
    const int32_t te = ea;
    const uint64_t tm = ma;
    sa = s, ea = e, ma = m;
    s = ts, e = te, m = tm;
  };
  if (ec >= ea && ec >= eb) swap_with_a(sc, ec, mc);
  else if (!(ea >= eb && ea >= ec)) swap_with_a(sb, eb, mb);
  if (ea == 0xff) {  // an inf or a NaN leads
    const bool nb = eb == 0xff, nc = ec == 0xff;
    if (nb && !ma && !mb && (sa ^ sb)) return kDefaultNan;
    if (nc && !ma && !mc && (sa ^ sc)) return kDefaultNan;
    if (nb && nc && !mb && !mc && (sb ^ sc)) return kDefaultNan;
    if (ma || (nb && mb) || (nc && mc)) return kDefaultNan;
    return sa << 31 | 0x7f800000u;
  }
  ma <<= 5, mb <<= 5, mc <<= 5;
  // Alignment keeps bits 3 and up, and one sticky bit at 0 for everything below.
  const auto align = [](uint64_t m, int32_t diff) {
    if (diff == 0) return m;
    m = shift_right_sticky(m, uint32_t(diff));
    return (m & ~uint64_t(7)) | uint64_t((m & 7) != 0);
  };
  mb = align(mb, ea - eb);
  mc = align(mc, ea - ec);
  const bool sub_b = sa != sb, sub_c = sa != sc;
  if (sub_b) {  // the second product negated: the upper bits complemented, the sticky bit kept
    const uint64_t sticky = mb & 3;
    mb = (~mb & ~uint64_t(7)) + sticky + (sticky ? 0 : 8);
  }
  if (sub_c) mc = (0 - mc) & ~uint64_t(2);  // the accumulator: two's complement, bit 1 cleared
  uint64_t z = ma + mb + mc;
  z = (z & ~uint64_t(2)) | (z >> 1 & 1);
  uint32_t sz = sa;
  if ((z & ~uint64_t(3)) == 0) return (sub_b || sub_c) ? (z ? sz << 31 : 0) : sz << 31;
  if (~(z | 3) == 0) return (sz ^ 1) << 31;
  if (z >= 0x100000000ull) {  // negative: the other sign
    sz ^= 1;
    z = (0 - z) & ~uint64_t(2);
  }
  int32_t ez = ea;
  while (z >= 0x20000000u) {
    ez++;
    z = ((z >> 1) & ~uint64_t(2)) | (z >> 2 & 1) | (z & 1);
  }
  ez--;
  z = ((z & ~uint64_t(1)) << 2) | (z & 1);
  const int32_t shift = __builtin_clz(uint32_t(z)) - 1;  // z > 3 here
  if (shift > 25) {
    ez -= 25;
    z = 0x40000000u | (z & 1);
  } else {
    ez -= shift;
    z = ((z & ~uint64_t(0x1f)) << shift) | (z & 0x1f);
  }
  return pack_toward_zero(sz, ez, z);
}

// A first step: p1 + p2 alone (C is not read).
inline uint32_t sum2(uint32_t p1, uint32_t p2) {
  uint32_t sa = p1 >> 31, sb = p2 >> 31;
  int32_t ea = int32_t(exp_of(p1)), eb = int32_t(exp_of(p2));
  uint64_t ma = uint64_t(p1 & 0x7fffff) << 7, mb = uint64_t(p2 & 0x7fffff) << 7;
  if (ea < eb || (ea == eb && ma < mb)) {
    const uint32_t ts = sa;
    const int32_t te = ea;
    const uint64_t tm = ma;
    sa = sb, ea = eb, ma = mb;
    sb = ts, eb = te, mb = tm;
  }
  if (ea == 0xff) {
    if (ma) return kDefaultNan;
    if (eb == 0xff && (mb || sa != sb)) return kDefaultNan;
    return sa << 31 | 0x7f800000u;
  }
  const int32_t diff = ea - eb;
  if (diff) {
    mb = shift_right_sticky(mb, uint32_t(diff));
    mb = (mb & ~uint64_t(2)) | (mb >> 1 & 1);
  }
  const bool sub = sa != sb;
  uint32_t sz = sa;
  int32_t ez = ea;
  uint64_t z = ma + (sub ? 0 - mb : mb);
  if (z >= 0x80000000u) {
    sz ^= 1;
    z = (0 - z) & ~uint64_t(2);
  }
  for (int i = 0; i < 2; i++) {
    if (z >= 0x10000000u) {
      ez++;
      z = ((z >> 1) & ~uint64_t(2)) | (z >> 2 & 1) | (z & 1);
    }
  }
  if (z == 0) {
    if (sub) return 0;  // x - x: +0 toward zero
    if (diff == 0) return sz << 31 | uint32_t(ez) << 23;
  }
  z = ((z & ~uint64_t(1)) << 2) | (z & 1);
  if (z < 0x40000000u) {
    ez--;
    z = ((z & ~uint64_t(1)) << 1) | (z & 1);
  }
  const int32_t shift = (z ? __builtin_clz(uint32_t(z)) : 32) - 1;
  ez -= shift;
  z = ((z & ~uint64_t(1)) << shift) | (z & 1);
  return pack_toward_zero(sz, ez, z);
}

// The lossless case. The datapath keeps down to 2^(emax - 152), emax the largest operand's
// exponent field, for the three-way sum and the pair sum alike (a product's significand holds its
// 22 bits from 2^(e - 147), an f32's its 24 from 2^(e - 150)). When every operand is a multiple
// of that, no bit is lost, and the chip's result is the exact sum (at most 34 bits wide: exact in
// a double) rounded toward zero, tiny results flushed: the host computes that branch-free, 8 lanes
// at a time where it has them, and takes sum3 / sum2 only for the other elements.

// An fp16 operand as the adder takes it: its value (a subnormal is a zero), exponent field (0 for
// a zero), the trailing zero bits of its 11-bit significand, and whether it is an inf or a NaN.
struct Operand16 {
  float v;
  int32_t e, t, special;
};

[[gnu::always_inline]] inline Operand16 operand16(uint16_t h) {
  const int32_t e = h >> 10 & 0x1f;
  const uint32_t sig = (h & 0x3ffu) | 0x400u;
  const uint32_t w = e == 0 ? uint32_t(h & 0x8000) << 16 : uint32_t(h & 0x8000) << 16 | uint32_t(e + 112) << 23 | (h & 0x3ffu) << 13;
  float v;
  std::memcpy(&v, &w, 4);
  return {v, e == 0x1f ? 0 : e, int32_t(__builtin_ctz(sig)), int32_t(e == 0x1f)};
}

// Whether a product of exponent field pe (0: a zero) with tz trailing zero bits keeps all of them.
[[gnu::always_inline]] inline int32_t product_fits(int32_t pe, int32_t tz, int32_t emax) {
  return int32_t(pe == 0) | int32_t(tz >= emax - pe - 5);
}

// Whether accumulator word c (subnormals already zero, finite) keeps all its bits.
[[gnu::always_inline]] inline int32_t accumulator_fits(uint32_t c, int32_t emax) {
  const int32_t ec = int32_t(exp_of(c));
  const int32_t need = emax - ec - 2;
  const uint32_t sig = (c & 0x7fffffu) | 0x800000u;
  const int32_t shift = std::min(std::max(need, 0), 31);
  return int32_t(ec == 0) | int32_t(need <= 0) | (int32_t(need < 24) & int32_t((sig & ((1u << shift) - 1)) == 0));
}

// The exponent field of the product of two operands (0 when either is a zero).
[[gnu::always_inline]] inline int32_t product_exp(const Operand16& a, const Operand16& b) {
  return (a.e == 0 || b.e == 0) ? 0 : a.e + b.e + 97;
}

// s (exact) rounded toward zero to an f32 word, a tiny result flushed to a zero of its sign, an
// overflow the largest finite float.
[[gnu::always_inline]] inline uint32_t exact_sum_toward_zero(double s) {
  const float f = float(s);
  uint32_t w;
  std::memcpy(&w, &f, 4);
  w -= uint32_t(std::fabs(double(f)) > std::fabs(s));  // rounded up in magnitude: one step back
  // Subnormal or zero: flushed, to the sign of the sum (a -0 stays -0; a tiny negative is -0).
  const uint32_t sign = (w & 0x80000000u) | (uint32_t(s < 0) << 31);
  const uint32_t normal = 0u - uint32_t((w & 0x7f800000u) != 0);
  return (w & normal) | (sign & ~normal);
}

// TensorFMA16A32's element step (a non-first one: + c; c a real f32 word), as the chip.
[[gnu::always_inline]] inline uint32_t step3(uint16_t a1, uint16_t b1, uint16_t a2, uint16_t b2, uint32_t c) {
  if ((c & 0x7f800000u) == 0) c &= 0x80000000u;
  const Operand16 x1 = operand16(a1), y1 = operand16(b1), x2 = operand16(a2), y2 = operand16(b2);
  const int32_t e1 = product_exp(x1, y1), e2 = product_exp(x2, y2), ec = int32_t(exp_of(c));
  const int32_t emax = e1 > e2 ? (e1 > ec ? e1 : ec) : (e2 > ec ? e2 : ec);
  const bool special = (x1.special | y1.special | x2.special | y2.special) || ec == 0xff;
  if (!special && product_fits(e1, x1.t + y1.t, emax) && product_fits(e2, x2.t + y2.t, emax) && accumulator_fits(c, emax)) {
    float cf;
    std::memcpy(&cf, &c, 4);
    return exact_sum_toward_zero(double(x1.v) * y1.v + double(x2.v) * y2.v + double(cf));
  }
  return sum3(product(a1, b1), product(a2, b2), c);
}

// A first step: the two products alone.
[[gnu::always_inline]] inline uint32_t step2(uint16_t a1, uint16_t b1, uint16_t a2, uint16_t b2) {
  const Operand16 x1 = operand16(a1), y1 = operand16(b1), x2 = operand16(a2), y2 = operand16(b2);
  const int32_t e1 = product_exp(x1, y1), e2 = product_exp(x2, y2), emax = e1 > e2 ? e1 : e2;
  const bool special = x1.special | y1.special | x2.special | y2.special;
  if (!special && product_fits(e1, x1.t + y1.t, emax) && product_fits(e2, x2.t + y2.t, emax)) {
    return exact_sum_toward_zero(double(x1.v) * y1.v + double(x2.v) * y2.v);
  }
  return sum2(product(a1, b1), product(a2, b2));
}

}  // namespace hart::et::emu::chip_fp16
