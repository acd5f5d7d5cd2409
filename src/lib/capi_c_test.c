/* The C API from C11: stories260K's greedy tokens for "Once upon a time", decoded token by token
 * through hart_decode / hart_logits / a greedy hart_sampler, equal `hart run --temp 0`'s; and
 * bad arguments come back as errors with messages.
 *   capi_c_test MODEL 'HART'     HART: the command that runs hart (an emulator may come first);
 *                                exits 77 (skipped) when MODEL is absent */
#define _POSIX_C_SOURCE 200809L /* popen */
#include <hart.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N_PREDICT = 24 };

static int failures = 0;

#define CHECK(cond)                                                              \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "%s:%d: CHECK(%s) failed (last error: %s)\n", __FILE__, __LINE__, \
              #cond, hart_last_error());                                         \
      failures++;                                                                \
    }                                                                            \
  } while (0)

/* `hart run --temp 0 --json`'s generated_tokens, read from its one line of JSON. */
static int reference_tokens(const char* hart, const char* model, int32_t* out, int max) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "%s run -m '%s' -p 'Once upon a time' -n %d --temp 0 --json 2>/dev/null", hart, model,
           N_PREDICT);
  FILE* p = popen(cmd, "r");
  if (!p) return -1;
  static char line[1 << 16];
  size_t n = fread(line, 1, sizeof line - 1, p);
  line[n] = '\0';
  if (pclose(p) != 0) return -1;
  const char* at = strstr(line, "\"generated_tokens\":[");
  if (!at) return -1;
  at += strlen("\"generated_tokens\":[");
  int count = 0;
  while (*at && *at != ']' && count < max) {
    char* end;
    out[count++] = (int32_t)strtol(at, &end, 10);
    at = *end == ',' ? end + 1 : end;
  }
  return count;
}

static void check_errors(hart_model* model) {
  int32_t tokens[4];
  char buf[8];
  /* NULL handles, negative sizes, too-small buffers, a missing file: errors with messages. */
  CHECK(hart_model_load(NULL, NULL) == NULL && hart_last_status() == HART_ERR_INVALID_ARGUMENT);
  CHECK(hart_model_load("/nonexistent/model.gguf", NULL) == NULL && hart_last_status() == HART_ERR_BAD_FILE);
  CHECK(strstr(hart_last_error(), "/nonexistent/model.gguf") != NULL);
  CHECK(hart_n_vocab(NULL) == HART_ERROR_COUNT && strlen(hart_last_error()) > 0);
  CHECK(hart_tokenize(model, "Once", -1, tokens, -4, true, true) == HART_ERROR_COUNT);
  CHECK(hart_last_status() == HART_ERR_INVALID_ARGUMENT);
  CHECK(hart_tokenize(model, "Once upon a time", -1, tokens, 2, true, true) == -5);
  CHECK(hart_last_status() == HART_ERR_BUFFER_TOO_SMALL);
  CHECK(hart_detokenize(model, tokens, -1, buf, (int32_t)sizeof buf, false) == HART_ERROR_COUNT);
  CHECK(hart_decode(NULL, tokens, 1) == HART_ERR_INVALID_ARGUMENT);
  /* A freed session is refused without its memory being touched. */
  hart_session* s = hart_session_new(model, NULL);
  CHECK(s != NULL);
  hart_session_free(s);
  CHECK(hart_decode(s, tokens, 1) == HART_ERR_INVALID_ARGUMENT);
  CHECK(strstr(hart_last_error(), "not a live handle") != NULL);
  /* A handle of another kind. */
  CHECK(hart_logits((hart_session*)model) == NULL && hart_last_status() == HART_ERR_INVALID_ARGUMENT);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: capi_c_test MODEL HART\n");
    return 2;
  }
  FILE* f = fopen(argv[1], "rb");
  if (!f) {
    printf("SKIP: test data not found: %s\n", argv[1]);
    return 77;
  }
  fclose(f);
  CHECK(hart_abi_version() == HART_ABI_VERSION);
  CHECK(strlen(hart_version()) > 0);

  hart_model_params mp = hart_model_default_params();
  mp.n_threads = 1;
  hart_model* model = hart_model_load(argv[1], &mp);
  if (!model) {
    fprintf(stderr, "cannot load %s: %s\n", argv[1], hart_last_error());
    return 1;
  }
  const int32_t n_vocab = hart_n_vocab(model);
  CHECK(n_vocab == 512);

  int32_t prompt[64];
  const int32_t n_prompt = hart_tokenize(model, "Once upon a time", -1, prompt, 64, true, true);
  CHECK(n_prompt == 5);

  hart_session* session = hart_session_new(model, NULL);
  hart_sampler_params sp = hart_sampler_default_params();
  sp.temperature = 0;
  hart_sampler* sampler = hart_sampler_new(model, &sp);
  CHECK(session != NULL && sampler != NULL);

  int32_t got[N_PREDICT];
  int n_got = 0;
  int rc = hart_decode(session, prompt, n_prompt);
  while (rc == HART_OK && n_got < N_PREDICT) {
    const int32_t t = hart_sampler_sample(sampler, hart_logits(session), n_vocab);
    CHECK(t >= 0);
    if (t < 0 || hart_token_is_eog(model, t)) break;
    hart_sampler_accept(sampler, t);
    got[n_got++] = t;
    rc = hart_decode(session, &t, 1);
  }
  CHECK(rc == HART_OK);

  int32_t want[N_PREDICT];
  const int n_want = reference_tokens(argv[2], argv[1], want, N_PREDICT);
  CHECK(n_want == N_PREDICT);
  CHECK(n_got == n_want);
  for (int i = 0; i < n_got && i < n_want; i++)
    if (got[i] != want[i]) {
      fprintf(stderr, "token %d: %d, hart run gives %d\n", i, got[i], want[i]);
      failures++;
      break;
    }
  char text[1024];
  const int32_t n_text = hart_detokenize(model, got, n_got, text, (int32_t)sizeof text, false);
  CHECK(n_text > 0);
  printf("Once upon a time%s\n", n_text > 0 ? text : "");

  check_errors(model);
  hart_sampler_free(sampler);
  hart_session_free(session);
  hart_model_free(model);
  printf("%d passed, %d failed\n", failures ? 0 : 1, failures ? 1 : 0);
  return failures ? 1 : 0;
}
