/* The work split the recurrent-state kernels share (RWKV_WKV7, GATED_DELTA_NET). Per sequence and
 * head the state has S rows (value channels) of S (key channels), and a token updates each row
 * reading only that row and the token's head vectors, so each (sequence, channel row c = h S + i)
 * runs through its sequence's tokens independently of every other: a hart takes a group of 16
 * consecutive channel rows of one sequence. 16 rows are one cache line of each y column and 16
 * whole state rows, so when the channels C = S H fill whole lines (C % 16 == 0) of a line-aligned
 * dst, no two harts write one line; for any other shape one hart computes everything (correct,
 * slow: no model has such heads).
 * Layouts (graph.h): state F32 [S C, n_s] contiguous, sequence s's row c at s S C + c S (with
 * cells, I32 [n_s], state is a store [S C, n_cells] and sequence s starts from column cells[s]); dst F32
 * [C, T + S n_s], y in the first T columns, then the final states laid out as state. T is a
 * multiple of n_s: sequence s owns tokens [s T/n_s, (s+1) T/n_s). */
#ifndef ET_STATE_H
#define ET_STATE_H

#include "et_rows.h"

#define ET_STATE_GROUP 16

typedef struct et_state_job {
  const float* state_in;
  const int32_t* cells; /* sequence s's column of state_in, or 0: column s */
  int64_t n_cells;      /* state_in's columns */
  float* dst;
  int64_t S, C, T, n_s, per_seq;
  int64_t units, first; /* the launch's units of work; this hart's first (then every num_threads-th) */
  int line_safe;        /* units are (sequence, 16 rows); else one unit of everything */
  const void* inputs;   /* the kernel's own mapped inputs, for its row function */
} et_state_job;

/* Channel rows [c0, c1) of sequence seq through its tokens, y of token t row c into
 * job->dst[t C + c]; state is the sequence's state in dst (row c at c S), holding its initial
 * value. */
typedef void (*et_state_rows_fn)(const et_state_job* job, int64_t seq, int64_t c0, int64_t c1, float* state);

/* What one hart did, for its kernel's et_count: rows run, row-tokens and group-tokens. */
typedef struct et_state_work {
  uint64_t rows, row_steps, group_steps;
} et_state_work;

/* Checks state (and cells, when given) and dst against S, C and T (failing with the kernel's
 * messages), and returns 0 when this hart has no unit of work; else 1, with *job filled and
 * state, cells and dst mapped. */
static inline int et_state_begin(const et_env* env, const et_tensor* state, const et_tensor* cells,
                                 const et_tensor* dst, int64_t S, int64_t C, int64_t T, const char* state_message,
                                 const char* dst_message, et_state_job* job) {
  const int64_t n_s = cells ? cells->ne[0] : state->ne[1];
  et_require(env, !cells || (cells->type == ET_TYPE_I32 && et_is_contiguous(cells) && cells->ne[1] == 1 &&
                             cells->ne[2] == 1 && cells->ne[3] == 1),
             "recurrent state: cells must be contiguous I32 [n_seqs]");
  et_require(env, state->type == ET_TYPE_F32 && et_is_contiguous(state) && state->ne[0] == S * C &&
                      state->ne[2] == 1 && state->ne[3] == 1 && n_s >= 1 && T % n_s == 0,
             state_message);
  et_require(env, dst->type == ET_TYPE_F32 && et_is_contiguous(dst) && dst->ne[0] == C && dst->ne[1] == T + S * n_s &&
                      dst->ne[2] == 1 && dst->ne[3] == 1,
             dst_message);
  job->line_safe = C % ET_STATE_GROUP == 0 && dst->addr % ET_CACHE_LINE == 0;
  job->units = job->line_safe ? n_s * (C / ET_STATE_GROUP) : 1;
  /* Units go to the first hart of every minion before any second one: the minion's two harts
   * share its vector unit, so one unit per minion finishes a small launch soonest. */
  const int64_t t = env->thread_id, nt = env->num_threads;
  job->first = (t % 2) * (nt / 2) + t / 2;
  if (job->first >= job->units) return 0;
  job->state_in = (const float*)et_tensor_data(env, state);
  job->cells = cells ? (const int32_t*)et_tensor_data(env, cells) : 0;
  job->n_cells = state->ne[1];
  job->dst = (float*)et_tensor_data(env, dst);
  job->S = S;
  job->C = C;
  job->T = T;
  job->n_s = n_s;
  job->per_seq = T / n_s;
  job->inputs = 0;
  return 1;
}

/* Runs fn over this hart's units, each sequence's rows copied from state_in into dst first (they
 * are updated in place there, their final home). */
static inline et_state_work et_run_state_rows(const et_env* env, const et_state_job* j, et_state_rows_fn fn) {
  et_state_work w = {0, 0, 0};
  const int64_t groups = j->C / ET_STATE_GROUP; /* per sequence, when line-safe */
  for (int64_t u = j->first; u < j->units; u += env->num_threads) {
    const int64_t seq0 = j->line_safe ? u / groups : 0, seq1 = j->line_safe ? seq0 + 1 : j->n_s;
    const int64_t c0 = j->line_safe ? u % groups * ET_STATE_GROUP : 0;
    const int64_t c1 = j->line_safe ? c0 + ET_STATE_GROUP : j->C;
    for (int64_t seq = seq0; seq < seq1; seq++) {
      float* state = j->dst + j->T * j->C + seq * j->S * j->C;
      const int64_t cell = j->cells ? j->cells[seq] : seq;
      et_require(env, cell >= 0 && cell < j->n_cells, "recurrent state: cell index out of range");
      const float* from = j->state_in + cell * j->S * j->C;
      for (int64_t e = c0 * j->S; e < c1 * j->S; e++) state[e] = from[e];
      fn(j, seq, c0, c1, state);
      w.rows += (uint64_t)(c1 - c0);
      w.row_steps += (uint64_t)((c1 - c0) * j->per_seq);
      w.group_steps += (uint64_t)j->per_seq;
    }
  }
  return w;
}

#endif
