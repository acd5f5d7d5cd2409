// The CPU kernel seam. Op kernels (ops/*.cpp) are written once and call the hot inner loops
// through this table; each ISA (arch/x86, arch/riscv) overrides the entries it speeds up and
// inherits the scalar reference for the rest. The table is chosen once at start-up from what the
// running CPU reports, or forced with HART_ISA=ref|avx2|avx512|amx|rvv|rvv_zvfh (an unknown or
// unsupported name is a clear error).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "types/tensor_type.h"

namespace hart::cpu {

// MUL_MAT inner product of one weight row (type W, n elements) with one activation row already
// converted to `act_type`. The reference set uses act_type F32 everywhere (exact); ISA sets may
// quantize activations (Q8_0 / Q8_K) for integer dot products.
using VecDotFn = void (*)(int64_t n, float* out, const void* w, const void* x);
// Converts a row of n floats to `act_type` (F32 rows are used as they are).
using FromF32Fn = void (*)(const float* x, void* y, int64_t n);
// Converts a row of n elements of some type to floats (dequantization).
using ToF32Fn = void (*)(const void* x, float* y, int64_t n);

// MUL_MAT tile: y[j * y_stride + i] = dot(W row i, X row j) for i < nw, j < nx; W rows (the
// weight type) are w_stride bytes apart, X rows (act_type) x_stride bytes apart, n elements
// each. A set's version reuses each weight block it loads across several X rows (prefill GEMM).
using GemmFn = void (*)(int64_t n, int64_t nw, int64_t nx, const void* w, size_t w_stride, const void* x,
                        size_t x_stride, float* y, size_t y_stride);
// Attention scores: s[i * n + j] = dot(K row k[j], q row i) for i < rows, j < n; K rows (the
// type, d elements each) wherever their cache slots are, q rows (act_type) q_stride bytes apart.
// A set's version converts each K row once for all q rows (a tile's tokens x a KV head's query
// heads) and reduces the sums of many pairs together.
using ScoresFn = void (*)(int64_t d, int64_t rows, const void* q, size_t q_stride, int64_t n, const char* const* k,
                          float* s);

// Attention values: y row i (n floats, rows n apart) += a[i * m] v[0] + ... + a[i * m + m - 1]
// v[m - 1] for i < rows; V rows (the type, n elements each) wherever their cache slots are. The
// same result as to_f32 of each V row, then axpy_rows per y row; a set's version converts each V
// row once for several y rows kept in registers (a tile's tokens x a KV head's query heads).
using ValuesFn = void (*)(int64_t n, int64_t rows, int64_t m, const float* a, const char* const* v, float* y);

struct DotKernel {
  Type act_type = Type::F32;
  VecDotFn vec_dot = nullptr;  // nullptr: weight type not supported by MUL_MAT
  // Same results as vec_dot per (W row, X row). nullptr: MUL_MAT calls vec_dot per pair. A set
  // that overrides vec_dot without a gemm of its own gets nullptr here (the reference's would
  // pair the reference activation type with the set's vec_dot).
  GemmFn gemm = nullptr;
  // Same results as vec_dot per (K row, q row) up to float summation order. nullptr (the
  // reference's): attention calls vec_dot per pair.
  ScoresFn scores = nullptr;
};

// MUL_MAT on weights repacked once into panels (backend/cpu/repack.h): `rows` consecutive W
// rows interleaved block by block, so one vector op works on all rows of a panel and a lane
// holds one row's sum. A panel takes exactly `rows` rows' bytes.
// pack: W rows [0, rows) (w_stride bytes apart, n elements each) -> one panel at `panel`.
using PackFn = void (*)(int64_t n, int rows, const void* w, size_t w_stride, void* panel);
// y[j * y_stride + i] = dot(W row i, X row j) for i < n_panels * rows, j < nx; X rows are the
// type's DotKernel::act_type (the same integer sums as vec_dot), x_stride bytes apart. `scratch`
// is PanelKernel::scratch_bytes(n, nx) bytes of the caller's (64-byte aligned), the kernel's
// own during the call (the X rows' blocks rearranged once per call). The caller's, so that a
// step's memory is planned with its graph: a buffer the kernel grew itself would be grown by
// whichever thread first met the largest shape, in any step of the run.
using PanelGemmFn = void (*)(int64_t n, int64_t n_panels, int64_t nx, const void* panels, size_t panel_stride,
                             const void* x, size_t x_stride, float* y, size_t y_stride, std::byte* scratch);
using PanelScratchFn = size_t (*)(int64_t n, int64_t nx);

struct PanelKernel {
  int rows = 0;  // panel height; 0: this set has no packed layout for the type
  PackFn pack = nullptr;
  PanelGemmFn gemm = nullptr;  // nx == 1 is the decode GEMV
  PanelScratchFn scratch = nullptr;  // the bytes gemm needs for nx X rows of n elements; nullptr: none
  // W rows per MUL_MAT tile the GEMM of several X rows works best with (a multiple of rows, set
  // for the core at fill time: RVV F16 groups as many panels as one register holds); 0: any.
  int tile_rows = 0;

  size_t scratch_bytes(int64_t n, int64_t nx) const { return scratch ? scratch(n, nx) : 0; }
};

struct Kernels {
  std::string name;  // "ref", "avx2", "avx512", "rvv", "rvv_zvfh"

  DotKernel dot[kTypeCount];
  PanelKernel panel[kTypeCount];  // indexed by weight type
  FromF32Fn from_f32[kTypeCount] = {};  // activation converters, indexed by act_type
  ToF32Fn to_f32[kTypeCount] = {};      // row dequantizers (GET_ROWS, CPY, F16 KV caches)
  ValuesFn values[kTypeCount] = {};     // attention values by V type; nullptr: to_f32 + axpy_rows

  // Row primitives (n elements, all F32). Outputs may alias inputs (y == x: in place).
  float (*dot_f32)(int64_t n, const float* a, const float* b) = nullptr;
  void (*rms_norm)(int64_t n, const float* x, float* y, float eps) = nullptr;  // y = x / rms(x)
  // y = (x - mean) / sqrt(var + eps), the layer norm without weights
  void (*norm)(int64_t n, const float* x, float* y, float eps) = nullptr;
  void (*softmax)(int64_t n, float* x) = nullptr;  // in place; an all -inf row becomes all 0
  // One block of an online softmax row (attention): with x[j] = s[j] * scale + (bias ? bias[j] :
  // 0) for j < n and m' = max(*m, x[0 .. n)), s[j] becomes e^(x[j] - m'), *l becomes
  // *l e^(*m - m') + sum s[j] and *m becomes m'. Returns e^(*m - m'), the factor the row's
  // accumulated output is rescaled by. While m' is -inf (nothing seen) the weights are 0 and
  // the factor 1.
  float (*softmax_block)(int64_t n, float* s, float scale, const float* bias, float* m, float* l) = nullptr;
  void (*silu)(int64_t n, const float* x, float* y) = nullptr;
  void (*exp)(int64_t n, const float* x, float* y) = nullptr;  // y = e^x within a few ulp of expf
  void (*swiglu)(int64_t n, const float* gate, const float* up, float* y) = nullptr;
  void (*add)(int64_t n, const float* a, const float* b, float* y) = nullptr;
  void (*mul)(int64_t n, const float* a, const float* b, float* y) = nullptr;
  void (*sub)(int64_t n, const float* a, const float* b, float* y) = nullptr;
  void (*div)(int64_t n, const float* a, const float* b, float* y) = nullptr;
  void (*clamp)(int64_t n, const float* x, float lo, float hi, float* y) = nullptr;  // min(max(x, lo), hi)
  // idx[0 .. k) = the indices of x's k largest values, largest first; equal values keep the
  // lower index first. Values are ordered as float_order_key() orders them (a total order: -0
  // below +0, NaNs at the ends by sign), so any input gives one answer. O(n^2 / lanes): for rows
  // of expert scores (n up to a few hundred).
  void (*top_k)(int64_t n, const float* x, int k, int32_t* idx) = nullptr;
  // The index of x's largest value, the lowest such index on ties (compared as floats: -0 == +0);
  // NaNs are passed over, and a row without any other value (or n = 0) gives 0. Greedy sampling
  // over a vocabulary's logits.
  int64_t (*argmax)(int64_t n, const float* x) = nullptr;
  // gelu is ggml's tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
  void (*gelu)(int64_t n, const float* x, float* y) = nullptr;
  void (*tanh)(int64_t n, const float* x, float* y) = nullptr;  // within 1e-6 of std::tanh
  void (*sigmoid)(int64_t n, const float* x, float* y) = nullptr;
  void (*geglu)(int64_t n, const float* gate, const float* up, float* y) = nullptr;
  void (*scale)(int64_t n, const float* x, float s, float* y) = nullptr;
  // y += a * x
  void (*axpy)(int64_t n, float a, const float* x, float* y) = nullptr;
  // y += a[0] x[0] + ... + a[m-1] x[m-1], rows x[j] of n floats, added in that order (m axpy
  // calls' result): attention's softmax-weighted sum of a block of V rows, y kept in registers.
  void (*axpy_rows)(int64_t n, int64_t m, const float* a, const float* const* x, float* y) = nullptr;
  // One row of RWKV-7's WKV state update: s' = s * w + v * k + sa * b (element-wise over the n
  // key channels) into s_out, returning dot(s', r). s_out may be s: the recurrence reads the
  // state before a sequence's first token from the op's input and updates its output in place.
  float (*wkv7_row)(int64_t n, const float* s, float* s_out, const float* w, const float* k, const float* b,
                    const float* r, float v, float sa) = nullptr;
  // One row of the gated delta rule's state update: s' = s * decay + d * k (element-wise over the
  // n key channels) into s_out, returning dot(s', q). s_out may be s, as for wkv7_row.
  float (*delta_row)(int64_t n, const float* s, float* s_out, float decay, const float* k, float d,
                     const float* q) = nullptr;
  // RoPE on one row: pair i < half, (x[2i], x[2i+1]) or with `neox` (x[i], x[i + half]), becomes
  // (x0 cos[i] - x1 sin[i], x0 sin[i] + x1 cos[i]); nothing past the pairs is written. y may be x.
  void (*rope)(int64_t half, bool neox, const float* cos, const float* sin, const float* x, float* y) = nullptr;
};

// An int32 whose signed order is the float order of x (IEEE 754 totalOrder): the bits of a
// non-negative float as they are, those of a negative one with the magnitude bits flipped.
inline int32_t float_order_key(float x) {
  int32_t b;
  __builtin_memcpy(&b, &x, 4);
  return b ^ ((b >> 31) & 0x7fffffff);
}

// What an arch folder (arch/x86, arch/riscv) contributes: named sets, each a copy of the
// reference with some entries overridden. CMake compiles exactly one arch's arch_kernel_sets()
// (or an empty one for other CPUs).
struct ArchKernelSet {
  std::string name;
  bool (*supported)();          // does the running CPU have what this set needs?
  void (*fill)(Kernels& k);     // overrides entries of a copy of ref_kernels()
};
std::vector<ArchKernelSet> arch_kernel_sets();  // best last
// A copy of the reference with set.fill's overrides, named set.name (call only if supported).
Kernels build_kernel_set(const ArchKernelSet& set);

// The scalar reference set: every entry filled, the yardstick every ISA set is tested against.
const Kernels& ref_kernels();
// The set in use: chosen on first call from HART_ISA or the best the CPU supports.
const Kernels& kernels();
// Every set this binary can run on this CPU, best last (tests hold each to the reference).
std::vector<const Kernels*> available_kernels();
// Forces a set by name; throws hart::Error for an unknown or unsupported name.
void select_kernels(std::string_view name);

}  // namespace hart::cpu
