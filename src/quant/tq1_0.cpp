// TQ1_0: ternary weights at 1.6875 bits. A byte holds 5 trits t0..t4 as the fraction
// ceil(256 * (t0 t1 t2 t3 t4 in base 3) / 243) / 256, so trit k is the integer part of 3 * the
// byte times 3^k mod 256 (over 256). qs[0..32) hold weights 32k + m (trit k of byte m, k < 5),
// qs[32..48) weights 160 + 16k + m, and qh[0..4) weights 240 + 4k + m (4 trits, the fifth 0).
#include "quant/ternary.h"

namespace hart::quant {
namespace {

constexpr uint8_t kPow3[5] = {1, 3, 9, 27, 81};

int8_t trit(uint8_t byte, int k) { return int8_t(((uint16_t(uint8_t(byte * kPow3[k])) * 3) >> 8) - 1); }

// The byte of `count` trits t[0], t[stride], ... (most significant first), padded to 5.
uint8_t pack_trits(const uint8_t* t, int stride, int count) {
  unsigned q = 0;
  for (int k = 0; k < 5; k++) q = q * 3 + (k < count ? t[k * stride] : 0);
  return uint8_t((q * 256 + 242) / 243);
}

// Where each byte's trits start and how far apart they are: 32 bytes (stride 32) at element 0,
// 16 bytes (stride 16) at 160, and qh's 4 bytes (stride 4) at 240.
struct Run {
  int first_byte, bytes, first_weight, trits;
};
constexpr Run kRuns[3] = {{0, 32, 0, 5}, {32, 16, 160, 5}, {48, 4, 240, 4}};

const uint8_t* byte_at(const block_tq1_0& b, int i) { return i < 48 ? b.qs + i : b.qh + (i - 48); }
uint8_t* byte_at(block_tq1_0& b, int i) { return i < 48 ? b.qs + i : b.qh + (i - 48); }

void levels(const block_tq1_0& b, int8_t* q) {
  for (const Run& r : kRuns)
    for (int m = 0; m < r.bytes; m++)
      for (int k = 0; k < r.trits; k++) q[r.first_weight + r.bytes * k + m] = trit(*byte_at(b, r.first_byte + m), k);
}

void pack(const uint8_t* trits, block_tq1_0& b) {
  for (const Run& r : kRuns)
    for (int m = 0; m < r.bytes; m++)
      *byte_at(b, r.first_byte + m) = pack_trits(trits + r.first_weight + m, r.bytes, r.trits);
}

}  // namespace

Codec codec_tq1_0() { return ternary_codec<block_tq1_0, levels, pack>(); }

}  // namespace hart::quant
