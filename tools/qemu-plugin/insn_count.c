/*
 * QEMU TCG plugin: counts executed guest instructions exactly, in total and optionally per
 * mnemonic or per function (the guest symbol an instruction lies in, which names the kernel that
 * runs it). Written against QEMU's plugin API version 1 (QEMU 7.2); Debian ships no
 * qemu-plugin.h, so the few declarations used are repeated below from that header.
 *
 *   qemu-riscv64 -plugin insn_count.so[,out=FILE][,by=mnemonic|function] PROGRAM
 *
 * Each translated block registers an execution callback that adds the block's instruction count
 * (and, per key, one per instruction) with atomic adds: guest threads run as parallel vCPUs.
 * A block runs to its end unless an instruction faults, which a normal run never does.
 * Output: "total N" then "KEY N" lines, most frequent first; to FILE or QEMU's log. Functions
 * are raw (mangled) symbol names, "?" where the guest has none (stripped or dynamic libraries).
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
const char *qemu_plugin_insn_symbol(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
void qemu_plugin_outs(const char *string);
QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
                                           char **argv);
QEMU_PLUGIN_EXPORT extern int qemu_plugin_version;
/* ---- end of the API declarations ---- */

QEMU_PLUGIN_EXPORT int qemu_plugin_version = 1;

/* C++ kernel symbols are long (mangled templates); longer names are cut, which can merge two. */
enum { kMaxKeys = 8192, kKeyLen = 512 };

struct key {
  char name[kKeyLen];
  uint64_t count;
};

enum key_kind { KEY_NONE, KEY_MNEMONIC, KEY_FUNCTION };

/* What one translated block adds each time it runs. */
struct block {
  uint64_t n_insns;
  uint32_t slot[]; /* key index of each instruction (when counting per key) */
};

static uint64_t total;
static enum key_kind key_kind = KEY_NONE;
static const char *out_path;
static struct key keys[kMaxKeys];
static size_t n_keys;
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
  if (len >= kKeyLen) len = kKeyLen - 1;
  memcpy(name, p, len);
  name[len] = '\0';
}

/* The instruction's key: its mnemonic, or the symbol of the function it lies in. */
static void key_of(const struct qemu_plugin_insn *insn, char *name) {
  if (key_kind == KEY_MNEMONIC) {
    char *text = qemu_plugin_insn_disas(insn);
    mnemonic_of(text ? text : "", name);
    free(text);
  } else {
    const char *symbol = qemu_plugin_insn_symbol(insn);
    snprintf(name, kKeyLen, "%s", symbol && *symbol ? symbol : "?");
  }
}

/* Index of the instruction's key, added to the table on first sight. */
static uint32_t key_slot(const struct qemu_plugin_insn *insn) {
  char name[kKeyLen];
  key_of(insn, name);
  pthread_mutex_lock(&table_lock);
  size_t i = 0;
  while (i < n_keys && strcmp(keys[i].name, name) != 0) i++;
  if (i == n_keys) {
    if (n_keys == kMaxKeys) i = kMaxKeys - 1; /* table full: lump the rest */
    else memcpy(keys[n_keys++].name, name, strlen(name) + 1);
  }
  pthread_mutex_unlock(&table_lock);
  return (uint32_t)i;
}

static void block_exec(unsigned int vcpu_index, void *userdata) {
  (void)vcpu_index;
  const struct block *b = userdata;
  __atomic_fetch_add(&total, b->n_insns, __ATOMIC_RELAXED);
  if (key_kind != KEY_NONE)
    for (uint64_t i = 0; i < b->n_insns; i++)
      __atomic_fetch_add(&keys[b->slot[i]].count, 1, __ATOMIC_RELAXED);
}

/* Translation blocks are translated once and kept for the run: their records are never freed. */
static void block_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
  (void)id;
  const size_t n = qemu_plugin_tb_n_insns(tb);
  const bool per_key = key_kind != KEY_NONE;
  struct block *b = malloc(sizeof *b + (per_key ? n * sizeof(uint32_t) : 0));
  if (!b) abort();
  b->n_insns = n;
  if (per_key)
    for (size_t i = 0; i < n; i++) b->slot[i] = key_slot(qemu_plugin_tb_get_insn(tb, i));
  qemu_plugin_register_vcpu_tb_exec_cb(tb, block_exec, QEMU_PLUGIN_CB_NO_REGS, b);
}

static int by_count_desc(const void *a, const void *b) {
  const uint64_t x = ((const struct key *)a)->count, y = ((const struct key *)b)->count;
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
  char line[kKeyLen + 32];
  snprintf(line, sizeof line, "total %" PRIu64 "\n", total);
  emit(f, line);
  qsort(keys, n_keys, sizeof keys[0], by_count_desc);
  for (size_t i = 0; i < n_keys && keys[i].count; i++) {
    snprintf(line, sizeof line, "%.*s %" PRIu64 "\n", kKeyLen - 1, keys[i].name, keys[i].count);
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
    } else if (strcmp(argv[i], "by=mnemonic") == 0) {
      key_kind = KEY_MNEMONIC;
    } else if (strcmp(argv[i], "by=function") == 0) {
      key_kind = KEY_FUNCTION;
    } else {
      fprintf(stderr, "insn_count: unknown argument '%s' (out=FILE, by=mnemonic|function)\n", argv[i]);
      return -1;
    }
  }
  qemu_plugin_register_vcpu_tb_trans_cb(id, block_trans);
  qemu_plugin_register_atexit_cb(id, report, NULL);
  return 0;
}
