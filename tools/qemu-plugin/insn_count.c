/*
 * QEMU TCG plugin: counts executed guest instructions exactly, in total and optionally per
 * mnemonic. Written against QEMU's plugin API version 1 (QEMU 7.2); Debian ships no
 * qemu-plugin.h, so the few declarations used are repeated below from that header.
 *
 *   qemu-riscv64 -plugin insn_count.so[,out=FILE][,mnemonics=on] PROGRAM
 *
 * Each translated block registers an execution callback that adds the block's instruction count
 * (and, per mnemonic, one per instruction) with atomic adds: guest threads run as parallel vCPUs.
 * A block runs to its end unless an instruction faults, which a normal run never does.
 * Output: "total N" then "MNEMONIC N" lines, most frequent first; to FILE or QEMU's log.
 * Build: gcc -shared -fPIC -O2 -o insn_count.so insn_count.c (scripts/riscv-insn-count does).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- QEMU plugin API, version 1 (include/qemu/qemu-plugin.h of QEMU 7.2) ---- */
#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))
typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t; /* fields unused here */
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb,
                                          enum qemu_plugin_cb_flags flags, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
char *qemu_plugin_insn_disas(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
void qemu_plugin_outs(const char *string);
QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
                                           char **argv);
QEMU_PLUGIN_EXPORT extern int qemu_plugin_version;
/* ---- end of the API declarations ---- */

QEMU_PLUGIN_EXPORT int qemu_plugin_version = 1;

enum { kMaxMnemonics = 4096, kMnemonicLen = 32 };

struct mnemonic {
  char name[kMnemonicLen];
  uint64_t count;
};

/* What one translated block adds each time it runs. */
struct block {
  uint64_t n_insns;
  uint32_t slot[]; /* mnemonic index of each instruction (mnemonic mode only) */
};

static uint64_t total;
static bool per_mnemonic;
static const char *out_path;
static struct mnemonic mnemonics[kMaxMnemonics];
static size_t n_mnemonics;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

/* The mnemonic in QEMU's disassembly "<encoding in hex>  <mnemonic> <operands>". */
static void mnemonic_of(const char *text, char *name) {
  const char *p = text + strspn(text, " \t");
  const size_t first = strcspn(p, " \t");
  if (first > 0 && strspn(p, "0123456789abcdef") == first && p[first] != '\0') {
    p += first;
    p += strspn(p, " \t");
  }
  size_t len = strcspn(p, " \t");
  if (len >= kMnemonicLen) len = kMnemonicLen - 1;
  memcpy(name, p, len);
  name[len] = '\0';
}

/* Index of the instruction's mnemonic, added to the table on first sight. */
static uint32_t mnemonic_slot(const struct qemu_plugin_insn *insn) {
  char *text = qemu_plugin_insn_disas(insn);
  char name[kMnemonicLen];
  mnemonic_of(text ? text : "", name);
  const size_t len = strlen(name);
  free(text);
  pthread_mutex_lock(&table_lock);
  size_t i = 0;
  while (i < n_mnemonics && strcmp(mnemonics[i].name, name) != 0) i++;
  if (i == n_mnemonics) {
    if (n_mnemonics == kMaxMnemonics) i = kMaxMnemonics - 1; /* table full: lump the rest */
    else memcpy(mnemonics[n_mnemonics++].name, name, len + 1);
  }
  pthread_mutex_unlock(&table_lock);
  return (uint32_t)i;
}

static void block_exec(unsigned int vcpu_index, void *userdata) {
  (void)vcpu_index;
  const struct block *b = userdata;
  __atomic_fetch_add(&total, b->n_insns, __ATOMIC_RELAXED);
  if (per_mnemonic)
    for (uint64_t i = 0; i < b->n_insns; i++)
      __atomic_fetch_add(&mnemonics[b->slot[i]].count, 1, __ATOMIC_RELAXED);
}

/* Translation blocks are translated once and kept for the run: their records are never freed. */
static void block_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
  (void)id;
  const size_t n = qemu_plugin_tb_n_insns(tb);
  struct block *b = malloc(sizeof *b + (per_mnemonic ? n * sizeof(uint32_t) : 0));
  if (!b) abort();
  b->n_insns = n;
  if (per_mnemonic)
    for (size_t i = 0; i < n; i++) b->slot[i] = mnemonic_slot(qemu_plugin_tb_get_insn(tb, i));
  qemu_plugin_register_vcpu_tb_exec_cb(tb, block_exec, QEMU_PLUGIN_CB_NO_REGS, b);
}

static int by_count_desc(const void *a, const void *b) {
  const uint64_t x = ((const struct mnemonic *)a)->count, y = ((const struct mnemonic *)b)->count;
  return x < y ? 1 : x > y ? -1 : 0;
}

static void emit(FILE *f, const char *line) {
  if (f) fputs(line, f);
  else qemu_plugin_outs(line);
}

static void report(qemu_plugin_id_t id, void *userdata) {
  (void)id;
  (void)userdata;
  FILE *f = out_path ? fopen(out_path, "w") : NULL;
  if (out_path && !f) fprintf(stderr, "insn_count: cannot write %s\n", out_path);
  char line[96];
  snprintf(line, sizeof line, "total %" PRIu64 "\n", total);
  emit(f, line);
  qsort(mnemonics, n_mnemonics, sizeof mnemonics[0], by_count_desc);
  for (size_t i = 0; i < n_mnemonics && mnemonics[i].count; i++) {
    snprintf(line, sizeof line, "%.31s %" PRIu64 "\n", mnemonics[i].name, mnemonics[i].count);
    emit(f, line);
  }
  if (f) fclose(f);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
                                           char **argv) {
  (void)info;
  for (int i = 0; i < argc; i++) {
    if (strncmp(argv[i], "out=", 4) == 0) {
      out_path = argv[i] + 4;
    } else if (strcmp(argv[i], "mnemonics=on") == 0) {
      per_mnemonic = true;
    } else if (strcmp(argv[i], "mnemonics=off") != 0) {
      fprintf(stderr, "insn_count: unknown argument '%s' (out=FILE, mnemonics=on|off)\n", argv[i]);
      return -1;
    }
  }
  qemu_plugin_register_vcpu_tb_trans_cb(id, block_trans);
  qemu_plugin_register_atexit_cb(id, report, NULL);
  return 0;
}
