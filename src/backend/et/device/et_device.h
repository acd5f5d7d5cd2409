/* The device kernel ABI: what a kernel sees of the machine it runs on.
 * Freestanding C (no libc): kernels include only this, et_math.h, et_params.h and et_rows.h.
 * Every kernel is `void et_kernel_<name>(const void* params, const et_env* env)`, run once per hart
 * of the launch. Device memory is reached only through et_ptr(), which the runtime translates
 * (and the emulator bounds-checks against live allocations); a bad access never returns. */
#ifndef ET_DEVICE_H
#define ET_DEVICE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ET_CACHE_LINE 64
#define ET_MINIONS_PER_SHIRE 32
#define ET_HARTS_PER_MINION 2
#define ET_HARTS_PER_SHIRE (ET_MINIONS_PER_SHIRE * ET_HARTS_PER_MINION)

/* Work a hart reports so the cost model can time the launch. flops and bytes are the kernel's own
 * (et_count); the matrix engine adds what its instructions do: their flops (also in flops) and the
 * cycles it is busy (see et_tensor_insn). */
typedef struct et_counters {
  uint64_t flops;
  uint64_t bytes_read;
  uint64_t bytes_written;
  uint64_t tensor_flops;
  uint64_t tensor_cycles;
} et_counters;

enum et_barrier_scope {
  ET_BARRIER_MINION = 0, /* the two harts of one minion */
  ET_BARRIER_SHIRE = 1,  /* the 64 harts of one shire */
  ET_BARRIER_LAUNCH = 2, /* every hart of the launch */
  ET_SEAM = 3            /* no wait: this hart passes a seam between an uberkernel's sub-kernels
                          * (the runtime notes its counters there, to tell the sub-kernels' work
                          * apart) */
};

/* ---- The matrix engine: ET-SoC-1's tensor extension ----------------------------------------
 * Each minion has an L1 scratchpad of ET_SCP_LINES 64-byte lines and a 16 x 16 fp32 accumulator C
 * (on the chip, the minion's floating-point registers: row i in f[2i], f[2i+1]). Only the minion's
 * first hart (hart_in_minion 0) issues tensor instructions. As the chip's instructions:
 *   LOAD       lines 64-byte rows of memory (64-byte aligned, stride bytes apart) into scratchpad
 *              lines [line, line + lines) (TensorLoad, no transformation)
 *   FMA32      C[i][j] (+)= sum over p < k of A[i][p] * B[p][j], A row i = fp32 scratchpad line
 *              a_line + i (elements p), B row p = line b_line + p (16 fp32 columns); each step one
 *              fused multiply-add (TensorFMA32)
 *   FMA16A32   the same with A row i = 2k fp16 of line a_line + i and B line b_line + p holding the
 *              fp16 pairs (B[2p][j], B[2p+1][j]) at elements 2j, 2j + 1: each step adds the two exact
 *              fp16 products to C[i][j] in fp32 (TensorFMA16A32; K = 2k)
 *              first: C = A B (the first pass of a tile), else C += A B; rows i < rows of C.
 *   STORE      C's first rows rows (16 fp32 = 64 bytes each) to memory stride bytes apart (TensorStore)
 *   SEND/RECV  TensorReduce between two minions of one shire: SEND hands C's first rows rows to
 *              minion partner, whose RECV adds them to its C (FADD); each waits for the other.
 * Addresses are host views (et_ptr, et_shire_scratch). The emulator completes an instruction before
 * it returns, so TensorWait has nothing to wait for. */
#define ET_SCP_LINES 48
#define ET_TILE 16
/* The shire's L2 scratchpad (on the chip, SRAM of the shire's L2 set aside as scratchpad), shared by
 * its minions: where a packing hart leaves tiles for the engine's TensorLoads. */
#define ET_SHIRE_SCRATCH_BYTES (4u << 20)
#define ET_MINION_SCRATCH_BYTES (ET_SHIRE_SCRATCH_BYTES / ET_MINIONS_PER_SHIRE)

enum et_tensor_op {
  ET_TENSOR_LOAD = 0,
  ET_TENSOR_FMA32 = 1,
  ET_TENSOR_FMA16A32 = 2,
  ET_TENSOR_STORE = 3,
  ET_TENSOR_SEND = 4,
  ET_TENSOR_RECV = 5
};

typedef struct et_tensor_insn {
  int32_t op;
  int32_t line;    /* LOAD: first scratchpad line; FMA: A's first line */
  int32_t b_line;  /* FMA: B's first line */
  int32_t rows;    /* LOAD: lines; FMA: rows of A and C; STORE, SEND, RECV: rows of C */
  int32_t k;       /* FMA: steps (fp32 elements, or fp16 pairs), 1..16 */
  int32_t first;   /* FMA: C = A B instead of C += A B */
  int32_t partner; /* SEND, RECV: the other minion (minion_id within this shire) */
  int32_t reserved;
  void* mem;       /* LOAD: source; STORE: destination */
  int64_t stride;  /* LOAD, STORE: bytes between rows in memory */
} et_tensor_insn;

typedef struct et_env et_env;
struct et_env {
  uint32_t hart_id;        /* absolute: shire * 64 + minion * 2 + hart_in_minion */
  uint32_t shire_id;
  uint32_t minion_id;      /* within the shire */
  uint32_t hart_in_minion;
  uint32_t thread_id;      /* rank among the launch's harts (shires in mask order) */
  uint32_t num_threads;    /* 64 * popcount(shire_mask) */
  uint64_t shire_mask;
  et_counters* counters;   /* this hart's counters */
  /* Host-side address of [addr, addr + bytes); faults (does not return) when out of bounds. */
  void* (*translate)(const et_env* env, uint64_t addr, uint64_t bytes);
  void (*barrier)(const et_env* env, int scope);
  /* Ends the launch with an error on its stream; does not return. */
  void (*fail)(const et_env* env, const char* message);
  /* Runs one tensor instruction on this hart's minion's engine; faults (does not return) on a
   * malformed one. */
  void (*tensor)(const et_env* env, const et_tensor_insn* insn);
  uint8_t* shire_scratch;  /* this shire's L2 scratchpad, ET_SHIRE_SCRATCH_BYTES */
  void* runtime;           /* the runtime's per-hart state */
};

typedef void (*et_kernel_fn)(const void* params, const et_env* env);

#define ET_KERNEL(name) void et_kernel_##name(const void* params, const et_env* env)

static inline void* et_ptr(const et_env* env, uint64_t addr, uint64_t bytes) {
  return env->translate(env, addr, bytes);
}

static inline void et_barrier(const et_env* env, int scope) { env->barrier(env, scope); }

static inline void et_fail(const et_env* env, const char* message) { env->fail(env, message); }

/* This minion's share of its shire's L2 scratchpad: ET_MINION_SCRATCH_BYTES, 64-byte aligned. */
static inline uint8_t* et_minion_scratch(const et_env* env) {
  return env->shire_scratch + env->minion_id * ET_MINION_SCRATCH_BYTES;
}

static inline void et_tensor_load(const et_env* env, int line, const void* src, int lines, int64_t stride) {
  et_tensor_insn t = {ET_TENSOR_LOAD, line, 0, lines, 0, 0, 0, 0, (void*)src, stride};
  env->tensor(env, &t);
}

/* op ET_TENSOR_FMA32 or ET_TENSOR_FMA16A32. */
static inline void et_tensor_fma(const et_env* env, int op, int a_line, int b_line, int rows, int k, int first) {
  et_tensor_insn t = {op, a_line, b_line, rows, k, first, 0, 0, 0, 0};
  env->tensor(env, &t);
}

static inline void et_tensor_store(const et_env* env, void* dst, int rows, int64_t stride) {
  et_tensor_insn t = {ET_TENSOR_STORE, 0, 0, rows, 0, 0, 0, 0, dst, stride};
  env->tensor(env, &t);
}

/* op ET_TENSOR_SEND or ET_TENSOR_RECV. */
static inline void et_tensor_reduce(const et_env* env, int op, int partner, int rows) {
  et_tensor_insn t = {op, 0, 0, rows, 0, 0, partner, 0, 0, 0};
  env->tensor(env, &t);
}

static inline void et_count(const et_env* env, uint64_t flops, uint64_t bytes_read,
                            uint64_t bytes_written) {
  env->counters->flops += flops;
  env->counters->bytes_read += bytes_read;
  env->counters->bytes_written += bytes_written;
}

/* A half-open range of element indices. */
typedef struct et_range {
  int64_t begin;
  int64_t end;
} et_range;

/* Thread t's (of nt; et_split_lines: this hart's) share of an output of n elements (elem_bytes
 * each, contiguous from device address addr), cut on absolute 64-byte line boundaries so that no
 * two harts write one cache line. When rows of row_elems elements start on line boundaries, the cut also falls between rows, so
 * row-wise kernels compute each row's statistics once. */
static inline et_range et_split_lines_at(uint32_t t, uint32_t nt, uint64_t addr, int64_t n, int64_t elem_bytes,
                                         int64_t row_elems) {
  et_range r = {0, 0};
  if (n <= 0) return r;
  const uint64_t first = addr / ET_CACHE_LINE;
  const uint64_t last = (addr + (uint64_t)(n * elem_bytes) - 1) / ET_CACHE_LINE;
  const uint64_t row_bytes = (uint64_t)(row_elems * elem_bytes);
  uint64_t granule = 1; /* lines per unit */
  if (addr % ET_CACHE_LINE == 0 && row_bytes % ET_CACHE_LINE == 0) granule = row_bytes / ET_CACHE_LINE;
  const uint64_t units = (last - first + granule) / granule;
  const int64_t line_begin = (int64_t)(first + units * t / nt * granule);
  const int64_t line_end = (int64_t)(first + units * (t + 1) / nt * granule);
  /* An element belongs to the line holding its first byte. */
  int64_t b = (line_begin * ET_CACHE_LINE - (int64_t)addr + elem_bytes - 1) / elem_bytes;
  int64_t e = (line_end * ET_CACHE_LINE - (int64_t)addr + elem_bytes - 1) / elem_bytes;
  if (b < 0) b = 0;
  if (e > n) e = n;
  if (e < b) e = b;
  r.begin = b;
  r.end = e;
  return r;
}

static inline et_range et_split_lines(const et_env* env, uint64_t addr, int64_t n, int64_t elem_bytes,
                                      int64_t row_elems) {
  return et_split_lines_at(env->thread_id, env->num_threads, addr, n, elem_bytes, row_elems);
}

#ifdef __cplusplus
}
#endif

#endif
