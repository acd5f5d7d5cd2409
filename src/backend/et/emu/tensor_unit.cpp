#include "backend/et/emu/tensor_unit.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/et/device/et_tensor_rules.h"
#include "backend/et/emu/fp16_pair_sum.h"
#include "common/fp16.h"

namespace hart::et::emu {

namespace {

uint16_t f16_at(const uint8_t* line, int i) {
  uint16_t h;
  std::memcpy(&h, line + 2 * i, 2);
  return h;
}

float f32_at(const uint8_t* line, int i) {
  float f;
  std::memcpy(&f, line + 4 * i, 4);
  return f;
}

// The chip's scratchpad index wraps (sysemu: (start + i) % L1_SCP_ENTRIES).
const uint8_t* scp_line(const MinionTensorState& s, int line) { return s.scp[line % ET_SCP_LINES]; }

// Row i of C: each step p one fused multiply-add of A[i][p] by B's line p, in order.
[[gnu::always_inline]] inline void fma32_rows(MinionTensorState& s, const et_tensor_insn& t) {
  for (int i = 0; i < t.rows; i++) {
    float* c = s.c[i];
    const uint8_t* a_line = scp_line(s, t.line + i);
    for (int p = 0; p < t.k; p++) {
      const float a = f32_at(a_line, p);
      float b[ET_TILE];
      std::memcpy(b, scp_line(s, t.b_line + p), sizeof b);
      if (t.first && p == 0) {
        for (int j = 0; j < ET_TILE; j++) c[j] = a * b[j];
        continue;
      }
      // sysemu skips a product whose operand is +0 (it would add nothing but a -0 or a NaN)
      for (int j = 0; j < ET_TILE; j++) {
        const float r = std::fma(a, b[j], c[j]);
        c[j] = f32_bits(a) != 0 && f32_bits(b[j]) != 0 ? r : c[j];
      }
    }
  }
}

// Each step p: B's line p decoded once for all rows (16 fp16 pairs as fp16_pair_sum.h's operands,
// in arrays so that the loop below vectorizes), then every row's 16 elements in two passes: the
// lossless case for all of them without a branch (8 lanes where the host has them), then the few
// the chip's adder truncates through its bit-level model. An element whose A pair or B pair is all
// +0 keeps C, as sysemu skips it; a first step is the products' sum alone (C as -0: adds nothing).
[[gnu::always_inline]] inline void fma16a32_rows(MinionTensorState& s, const et_tensor_insn& t) {
  using namespace chip_fp16;
  for (int p = 0; p < t.k; p++) {
    const uint8_t* b = scp_line(s, t.b_line + p);
    uint16_t b1[ET_TILE], b2[ET_TILE];
    float v1[ET_TILE], v2[ET_TILE];
    int32_t e1b[ET_TILE], e2b[ET_TILE], t1b[ET_TILE], t2b[ET_TILE], special_b[ET_TILE];
    for (int j = 0; j < ET_TILE; j++) {
      b1[j] = f16_at(b, 2 * j);
      b2[j] = f16_at(b, 2 * j + 1);
      const Operand16 o1 = operand16(b1[j]), o2 = operand16(b2[j]);
      v1[j] = o1.v, v2[j] = o2.v, e1b[j] = o1.e, e2b[j] = o2.e, t1b[j] = o1.t, t2b[j] = o2.t;
      special_b[j] = o1.special | o2.special;
    }
    const bool first = t.first && p == 0;
    for (int i = 0; i < t.rows; i++) {
      const uint8_t* a = scp_line(s, t.line + i);
      const uint16_t a1 = f16_at(a, 2 * p), a2 = f16_at(a, 2 * p + 1);
      if (!first && (a1 | a2) == 0) continue;
      const Operand16 x1 = operand16(a1), x2 = operand16(a2);
      const double xv1 = x1.v, xv2 = x2.v;
      float* c = s.c[i];
      uint32_t word[ET_TILE], fast[ET_TILE];
      int32_t lossless[ET_TILE];
      const uint32_t keep_c = first ? 0 : ~0u, minus_zero = first ? 0x80000000u : 0;
      for (int j = 0; j < ET_TILE; j++) {
        uint32_t cw = (f32_bits(c[j]) & keep_c) | minus_zero;
        cw &= 0x80000000u | (0u - uint32_t((cw & 0x7f800000u) != 0));  // a subnormal is a zero
        word[j] = cw;
        const int32_t e1 = (x1.e + e1b[j] + 97) & -int32_t((x1.e != 0) & (e1b[j] != 0));
        const int32_t e2 = (x2.e + e2b[j] + 97) & -int32_t((x2.e != 0) & (e2b[j] != 0));
        const int32_t ec = int32_t(cw >> 23 & 0xff);
        const int32_t emax = std::max(std::max(e1, e2), ec);
        lossless[j] = int32_t((x1.special | x2.special | special_b[j] | int32_t(ec == 0xff)) == 0) &
                      product_fits(e1, x1.t + t1b[j], emax) & product_fits(e2, x2.t + t2b[j], emax) &
                      accumulator_fits(cw, emax);
        const double sum = xv1 * double(v1[j]) + xv2 * double(v2[j]) + double(bits_f32(cw));
        fast[j] = exact_sum_toward_zero(sum);
      }
      for (int j = 0; j < ET_TILE; j++) {
        if (!first && (b1[j] | b2[j]) == 0) continue;
        uint32_t r = fast[j];
        if (!lossless[j]) r = first ? sum2(product(a1, b1[j]), product(a2, b2[j])) : sum3(product(a1, b1[j]), product(a2, b2[j]), word[j]);
        c[j] = bits_f32(r);
      }
    }
  }
}

// The loops above run for every multiply-add the emulated matrices do (most of `hart ops --backend
// et`'s time): on x86-64 they are also built for AVX2 + FMA hardware, where std::fma is one
// instruction, not a call, and the element loops are 8 lanes wide. Chosen by a plain test, not an
// ifunc: a resolver runs before the sanitizers' runtimes are up.
#if defined(__x86_64__)
[[gnu::target("avx2,fma")]] void fma32_hardware(MinionTensorState& s, const et_tensor_insn& t) { fma32_rows(s, t); }
[[gnu::target("avx2,fma")]] void fma16a32_hardware(MinionTensorState& s, const et_tensor_insn& t) {
  fma16a32_rows(s, t);
}
bool host_has_avx2_fma() {
  static const bool yes = (__builtin_cpu_init(), __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"));
  return yes;
}
#endif

void fma32(MinionTensorState& s, const et_tensor_insn& t) {
#if defined(__x86_64__)
  if (host_has_avx2_fma()) return fma32_hardware(s, t);
#endif
  fma32_rows(s, t);
}

void fma16a32(MinionTensorState& s, const et_tensor_insn& t) {
#if defined(__x86_64__)
  if (host_has_avx2_fma()) return fma16a32_hardware(s, t);
#endif
  fma16a32_rows(s, t);
}

}  // namespace

std::optional<std::string> check_tensor_insn(const et_tensor_insn& t, uint32_t hart_in_minion, uint32_t minion_id) {
  const char* err = et_tensor_check(&t, hart_in_minion, minion_id);
  if (!err) return std::nullopt;
  if (t.op < ET_TENSOR_LOAD || t.op > ET_TENSOR_RECV) return std::string(err) + " " + std::to_string(t.op);
  return err;
}

void execute_tensor_insn(MinionTensorState& s, const et_tensor_insn& t, et_counters& counters) {
  switch (t.op) {
    case ET_TENSOR_LOAD: {
      const auto* src = static_cast<const uint8_t*>(t.mem);
      for (int i = 0; i < t.rows; i++) std::memcpy(s.scp[(t.line + i) % ET_SCP_LINES], src + i * t.stride, 64);
      break;
    }
    case ET_TENSOR_FMA32: case ET_TENSOR_FMA16A32: {
      const bool half = t.op == ET_TENSOR_FMA16A32;
      if (half) fma16a32(s, t);
      else fma32(s, t);
      break;
    }
    case ET_TENSOR_STORE: {
      auto* dst = static_cast<uint8_t*>(t.mem);
      for (int i = 0; i < t.rows; i++) std::memcpy(dst + i * t.stride, s.c[i], 64);
      break;
    }
    case ET_TENSOR_RECV: {
      for (int i = 0; i < t.rows; i++)
        for (int j = 0; j < ET_TILE; j++) s.c[i][j] += s.inbox[i][j];
      s.inbox_rows = 0;
      s.inbox_from = -1;
      s.expecting = -1;
      break;
    }
    default:
      return;  // SEND: send_tensor_rows
  }
  et_tensor_count(&t, &counters);
}

void send_tensor_rows(const MinionTensorState& from, int from_minion, MinionTensorState& to, int rows,
                      et_counters& counters) {
  std::memcpy(to.inbox, from.c, sizeof(float) * ET_TILE * size_t(rows));
  to.inbox_rows = rows;
  to.inbox_from = from_minion;
  const et_tensor_insn send = {ET_TENSOR_SEND, 0, 0, rows, 0, 0, 0, 0, nullptr, 0};
  et_tensor_count(&send, &counters);
}

}  // namespace hart::et::emu
