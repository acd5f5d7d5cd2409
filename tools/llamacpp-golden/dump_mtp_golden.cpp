// Prints llama.cpp's draft-mtp drafts as JSON, for tests/golden/mtp: the target decodes the prompt
// but for its last token, then greedily token after token; before each token is decoded, the
// MTP head drafts n_max tokens after the text so far (the last token not yet decoded, as in a
// speculative step), and its draft positions are removed again, as llama-server removes them
// before verifying. No draft is verified: the steps are those of plain greedy decoding, so that
// any engine can repeat them. Built against llama.cpp's libllama and libcommon by
// tools/llamacpp-golden/make-mtp; uses only llama.cpp's public and common API.
//   dump_mtp_golden MODEL.gguf PROMPT N_MAX N_STEPS REFERENCE
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common.h"
#include "llama.h"
#include "speculative.h"

namespace {

void print_tokens(const std::vector<llama_token>& t) {
  std::printf("[");
  for (size_t i = 0; i < t.size(); i++) std::printf("%s%d", i ? ", " : "", t[i]);
  std::printf("]");
}

llama_token argmax(const float* logits, int n) {
  int best = 0;
  for (int i = 1; i < n; i++)
    if (logits[i] > logits[best]) best = i;
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s MODEL.gguf PROMPT N_MAX N_STEPS REFERENCE\n", argv[0]);
    return 2;
  }
  common_params params;
  params.model.path = argv[1];
  params.prompt = argv[2];
  const int n_max = std::atoi(argv[3]), n_steps = std::atoi(argv[4]);
  params.n_ctx = 512;
  params.n_batch = params.n_ubatch = 512;
  params.cpuparams.n_threads = params.cpuparams_batch.n_threads = 1;
  params.speculative.types = {COMMON_SPECULATIVE_TYPE_DRAFT_MTP};
  params.speculative.draft.n_max = n_max;
  params.speculative.draft.n_min = 0;
  params.speculative.draft.p_min = 0.0f;
  const auto limits = common_speculative_get_output_limits(params.n_batch, 1, common_speculative_n_max(&params.speculative));
  params.n_outputs_max = limits.total;
  params.n_outputs_max_per_seq = limits.per_seq;
  common_init();
  llama_backend_init();

  auto init = common_init_from_params(params);
  llama_model* model = init->model();
  llama_context* ctx_tgt = init->context();
  if (!model || !ctx_tgt) return 1;
  common_params params_dft = common_base_params_to_speculative(params);
  auto spec_init = common_speculative_init_from_params(params_dft, model, ctx_tgt);
  params.speculative.draft.ctx_tgt = ctx_tgt;
  params.speculative.draft.ctx_dft = spec_init->context();
  llama_context* ctx_dft = params.speculative.draft.ctx_dft;
  if (!ctx_dft) return 1;
  common_speculative* spec = common_speculative_init(params.speculative, 1);
  if (!spec) return 1;
  const int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));

  const std::vector<llama_token> inp = common_tokenize(ctx_tgt, params.prompt, true, true);
  llama_batch batch = llama_batch_init(512, 0, 1);
  for (size_t i = 0; i + 1 < inp.size(); i++) common_batch_add(batch, inp[i], int(i), {0}, false);
  if (batch.n_tokens > 0) {
    if (llama_decode(ctx_tgt, batch) != 0 || !common_speculative_process(spec, batch)) return 1;
  }
  std::vector<llama_token> text(inp.begin(), inp.end() - 1);
  common_speculative_begin(spec, 0, text);

  std::printf("{\"reference\": \"%s\", \"prompt\": \"%s\", \"prompt_tokens\": ", argv[5], params.prompt.c_str());
  print_tokens(inp);
  std::printf(", \"n_max\": %d, \"steps\": [", n_max);
  llama_token id_last = inp.back();
  int n_past = int(inp.size()) - 1;
  std::vector<llama_token> draft;
  for (int step = 0; step < n_steps; step++) {
    draft.clear();
    common_speculative_get_draft_params(spec, 0) = {true, n_max, n_past, id_last, &text, &draft};
    common_speculative_draft(spec);
    llama_memory_seq_rm(llama_get_memory(ctx_dft), 0, n_past, -1);
    std::printf("%s{\"n_past\": %d, \"last\": %d, \"draft\": ", step ? ", " : "", n_past, id_last);
    print_tokens(draft);
    std::printf("}");
    common_batch_clear(batch);
    common_batch_add(batch, id_last, n_past, {0}, true);
    if (llama_decode(ctx_tgt, batch) != 0 || !common_speculative_process(spec, batch)) return 1;
    common_speculative_accept(spec, 0, 0);
    text.push_back(id_last);
    n_past++;
    id_last = argmax(llama_get_logits_ith(ctx_tgt, -1), n_vocab);
  }
  std::printf("]}\n");
  common_speculative_free(spec);
  llama_batch_free(batch);
  return 0;
}
