// The matrix engine of one minion (ET-SoC-1's tensor extension, device/et_device.h): its L1
// scratchpad and accumulator, and what each tensor instruction does to them and costs. Semantics
// are sysemu's (aifoundry-org/et-platform, sw-sysemu/insns/tensors.cpp); SEND/RECV's waiting for
// the partner is the hart runner's (harts.cpp), which owns the fibers.
//
// Costs, in engine cycles: one TensorFMA step (a row of A against B's 16 columns: 16 fp32, 32
// fp16 or 64 int8 multiply-adds) takes a cycle, so a full 16-row step 16 cycles. That is the
// published peak (139 int8 TOPS at 1 GHz over 1,088 minions = 128 int8 ops, 64 multiply-adds, per
// minion-cycle, Linley Group, "Esperanto Minions Excel at AI", 2020) spread over sysemu's K per
// step (4 int8, 2 fp16, 1 fp32): 16 fp32 or 32 fp16 multiply-adds per cycle, 32 or 64 flops,
// two or four times the 8-lane vector unit's 16. A TensorLoad or TensorStore moves a 64-byte line,
// and a TensorReduce a row of C, per cycle (estimates: the manual gives no rate).
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "backend/et/device/et_device.h"
#include "backend/et/emu/fp16_pair_sum.h"

namespace hart::et::emu {

struct MinionTensorState {
  alignas(64) uint8_t scp[ET_SCP_LINES][64] = {};
  float c[ET_TILE][ET_TILE] = {};
  // TensorReduce is a rendezvous: RECV names the minion it waits for (expecting), whose SEND then
  // fills the inbox (rows, from which minion), which RECV adds to C and empties.
  float inbox[ET_TILE][ET_TILE] = {};
  int expecting = -1;
  int inbox_rows = 0;
  int inbox_from = -1;
};

// Checks insn, issued by hart hart_in_minion of minion minion_id (device/et_tensor_rules.h, the
// device runtimes' rules too); the fault message when malformed.
std::optional<std::string> check_tensor_insn(const et_tensor_insn& insn, uint32_t hart_in_minion, uint32_t minion_id);

// Runs a LOAD, FMA or STORE on state, or the receiving half of a RECV (C += the inbox, which the
// caller has seen filled by the partner), and charges counters. insn is well-formed.
void execute_tensor_insn(MinionTensorState& state, const et_tensor_insn& insn, et_counters& counters);

// SEND's half: C's rows into the partner's inbox (it expects them; empty); charges counters.
void send_tensor_rows(const MinionTensorState& from, int from_minion, MinionTensorState& to, int rows,
                      et_counters& counters);

// TensorFMA16A32's step for one element: a1 b1 + a2 b2 + c through the chip's adder (the fp16
// products exact, one rounding toward zero of a datapath narrower than the exact sum:
// fp16_pair_sum.h); fma16a32_first the first pass's a1 b1 + a2 b2. Bit for bit sysemu's
// f1632_mulAdd3 / f1632_mulAdd2.
inline float fma16a32_step(uint16_t a1, uint16_t b1, uint16_t a2, uint16_t b2, float c) {
  uint32_t cb;
  std::memcpy(&cb, &c, 4);
  const uint32_t r = chip_fp16::step3(a1, b1, a2, b2, cb);
  float f;
  std::memcpy(&f, &r, 4);
  return f;
}
inline float fma16a32_first(uint16_t a1, uint16_t b1, uint16_t a2, uint16_t b2) {
  const uint32_t r = chip_fp16::step2(a1, b1, a2, b2);
  float f;
  std::memcpy(&f, &r, 4);
  return f;
}

}  // namespace hart::et::emu
