/* Greedy text from a prompt with hart's C API: cc example.c $(pkg-config --cflags --libs hart) */
#include <hart.h>
#include <stdio.h>

static bool print_piece(int32_t token, const char* piece, int32_t len, void* user) {
  (void)token, (void)user;
  fwrite(piece, 1, (size_t)len, stdout);
  return true; /* false would stop the generation here */
}

int main(int argc, char** argv) {
  const char* prompt = "Once upon a time";
  hart_model* model = hart_model_load(argc > 1 ? argv[1] : "stories260K.gguf", NULL);
  if (!model) return fprintf(stderr, "%s\n", hart_last_error()), 1;
  int32_t tokens[256];
  const int32_t n = hart_tokenize(model, prompt, -1, tokens, 256, true, true);
  hart_session* session = hart_session_new(model, NULL);
  hart_sampler_params sp = hart_sampler_default_params();
  sp.temperature = 0; /* greedy */
  hart_sampler* sampler = hart_sampler_new(model, &sp);
  hart_generate_params gp = hart_generate_default_params();
  gp.max_tokens = 32;
  printf("%s", prompt);
  if (n < 0 || !session || !sampler || hart_generate(session, sampler, tokens, n, &gp, print_piece, NULL) < 0)
    return fprintf(stderr, "\n%s\n", hart_last_error()), 1;
  printf("\n");
  hart_sampler_free(sampler);
  hart_session_free(session);
  hart_model_free(model);
  return 0;
}
