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

/* Work a hart reports so the cost model can time the launch. */
typedef struct et_counters {
  uint64_t flops;
  uint64_t bytes_read;
  uint64_t bytes_written;
} et_counters;

enum et_barrier_scope {
  ET_BARRIER_MINION = 0, /* the two harts of one minion */
  ET_BARRIER_SHIRE = 1,  /* the 64 harts of one shire */
  ET_BARRIER_LAUNCH = 2  /* every hart of the launch */
};

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
  void* runtime;           /* the runtime's per-hart state */
};

typedef void (*et_kernel_fn)(const void* params, const et_env* env);

#define ET_KERNEL(name) void et_kernel_##name(const void* params, const et_env* env)

static inline void* et_ptr(const et_env* env, uint64_t addr, uint64_t bytes) {
  return env->translate(env, addr, bytes);
}

static inline void et_barrier(const et_env* env, int scope) { env->barrier(env, scope); }

static inline void et_fail(const et_env* env, const char* message) { env->fail(env, message); }

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

/* This hart's share of an output of n elements (elem_bytes each, contiguous from device address
 * addr), cut on absolute 64-byte line boundaries so that no two harts write one cache line.
 * When rows of row_elems elements start on line boundaries, the cut also falls between rows, so
 * row-wise kernels compute each row's statistics once. */
static inline et_range et_split_lines(const et_env* env, uint64_t addr, int64_t n,
                                      int64_t elem_bytes, int64_t row_elems) {
  et_range r = {0, 0};
  if (n <= 0) return r;
  const uint64_t first = addr / ET_CACHE_LINE;
  const uint64_t last = (addr + (uint64_t)(n * elem_bytes) - 1) / ET_CACHE_LINE;
  const uint64_t row_bytes = (uint64_t)(row_elems * elem_bytes);
  uint64_t granule = 1; /* lines per unit */
  if (addr % ET_CACHE_LINE == 0 && row_bytes % ET_CACHE_LINE == 0) granule = row_bytes / ET_CACHE_LINE;
  const uint64_t units = (last - first + granule) / granule;
  const uint64_t t = env->thread_id, nt = env->num_threads;
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

#ifdef __cplusplus
}
#endif

#endif
