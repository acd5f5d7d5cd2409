// The emulator's TensorFMA16A32 adder (fp16_pair_sum.h) against sw-sysemu's own: the vendor's
// f1632_mulAdd3 and f1632_mulAdd2 (its fpu/tensors.cpp, as built into the platform's
// libsw-sysemu.a; declared here with the vendor's softfloat word types) on random operands, NaN,
// inf and subnormal bit patterns included, and on operands like the attention kernels' (where the
// emulator's lossless shortcut mostly applies): each result equal bit for bit, the bit-level model
// and the emulator's element steps alike. Built with
// -DHART_ET_PLATFORM; the vendor's TensorFMA16A32 runs them under round-toward-zero.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "backend/et/emu/fp16_pair_sum.h"

typedef struct {
  uint16_t v;
} float16_t;
typedef struct {
  uint32_t v;
} float32_t;
float32_t f1632_mulAdd3(float16_t, float16_t, float16_t, float16_t, float32_t);
float32_t f1632_mulAdd2(float16_t, float16_t, float16_t, float16_t);
extern "C" thread_local uint_fast8_t softfloat_roundingMode;

namespace hart::et::emu::chip_fp16 {
namespace {

constexpr uint_fast8_t kRoundMinMag = 1;  // softfloat_round_minMag, sysemu's TensorFMA16A32 mode

TEST(EtFp16PairSum, EqualsSysemusAdderBitForBit) {
  std::mt19937_64 rng(38);
  int64_t bad3 = 0, bad2 = 0;
  const int64_t n = 1000000;
  for (int64_t i = 0; i < n; i++) {
    uint16_t h[4];
    for (uint16_t& x : h) {  // a quarter of them normal numbers of every exponent, the rest any bits
      const uint64_t r = rng();
      x = (r >> 20) & 3 ? uint16_t(r) : uint16_t((r & 0x83ff) | ((r >> 10) % 31) << 10);
    }
    uint32_t c = uint32_t(rng());
    if (i % 3 == 0) c = (c & 0x807fffffu) | uint32_t(100 + rng() % 60) << 23;  // near the products
    if (i % 2 == 1) {  // the attention kernels' kind: normal operands of close exponents, c a sum of them
      for (uint16_t& x : h) x = uint16_t((x & 0x83ff) | (12 + (x >> 10 & 0x1f) % 6) << 10);
      c = (c & 0x807fffffu) | uint32_t(122 + rng() % 8) << 23;
      if (i % 5 == 0) c &= 0xfff00000u;
    }
    if (i % 97 == 0) c = 0;
    softfloat_roundingMode = kRoundMinMag;
    const uint32_t want3 = f1632_mulAdd3({h[0]}, {h[1]}, {h[2]}, {h[3]}, {c}).v;
    softfloat_roundingMode = kRoundMinMag;
    const uint32_t want2 = f1632_mulAdd2({h[0]}, {h[1]}, {h[2]}, {h[3]}).v;
    const uint32_t p1 = product(h[0], h[1]), p2 = product(h[2], h[3]);
    if (sum3(p1, p2, c) != want3 && bad3++ < 5) {
      ADD_FAILURE() << std::hex << "sum3 " << h[0] << " " << h[1] << " " << h[2] << " " << h[3] << " c " << c
                    << ": sysemu " << want3 << ", emulator " << sum3(p1, p2, c);
    }
    // The emulator's element steps: the lossless shortcut where it applies, else the two above.
    if (step3(h[0], h[1], h[2], h[3], c) != want3 && bad3++ < 5) {
      ADD_FAILURE() << std::hex << "step3 " << h[0] << " " << h[1] << " " << h[2] << " " << h[3] << " c " << c
                    << ": sysemu " << want3 << ", emulator " << step3(h[0], h[1], h[2], h[3], c);
    }
    if (step2(h[0], h[1], h[2], h[3]) != want2 && bad2++ < 5) {
      ADD_FAILURE() << std::hex << "step2 " << h[0] << " " << h[1] << " " << h[2] << " " << h[3] << ": sysemu "
                    << want2 << ", emulator " << step2(h[0], h[1], h[2], h[3]);
    }
    if (sum2(p1, p2) != want2 && bad2++ < 5) {
      ADD_FAILURE() << std::hex << "sum2 " << h[0] << " " << h[1] << " " << h[2] << " " << h[3] << ": sysemu "
                    << want2 << ", emulator " << sum2(p1, p2);
    }
  }
  EXPECT_EQ(bad3, 0);
  EXPECT_EQ(bad2, 0);
}

}  // namespace
}  // namespace hart::et::emu::chip_fp16
