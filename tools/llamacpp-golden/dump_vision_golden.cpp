// Writes the vision golden (tests/golden/vision/*.json) from llama.cpp's libmtmd itself: the
// prompt's chunks as mtmd_tokenize lays them out (text tokens; per image tile the embeddings
// mtmd_encode_chunk gives), then the text model's logits after the whole prompt and 8 greedy
// tokens. Not part of hart's build: compile it against a llama.cpp build
// (tools/llamacpp-golden/make-vision). As dump_golden: F32 K and V cache, flash attention off
// (in the text model and in clip), 2 threads, CPU only, no warmup.
//   dump_vision_golden TEXT_MODEL MMPROJ PROMPT REFERENCE IMAGE...   -> JSON on stdout
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "llama.h"
#include "mtmd-helper.h"
#include "mtmd.h"

namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

void floats(const float* v, size_t n) {
  std::printf("[");
  for (size_t i = 0; i < n; i++) std::printf("%s%.9g", i ? ", " : "", v[i]);
  std::printf("]");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: dump_vision_golden TEXT_MODEL MMPROJ PROMPT REFERENCE IMAGE...\n");
    return 2;
  }
  llama_backend_init();
  llama_model_params mparams = llama_model_default_params();
  mparams.n_gpu_layers = 0;
  llama_model* model = llama_model_load_from_file(argv[1], mparams);
  if (!model) return 1;
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = 1024;
  cp.n_batch = cp.n_ubatch = 512;
  cp.n_seq_max = 1;
  cp.type_k = cp.type_v = GGML_TYPE_F32;
  cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
  cp.n_threads = cp.n_threads_batch = 2;
  llama_context* lctx = llama_init_from_model(model, cp);

  mtmd_context_params mp = mtmd_context_params_default();
  mp.use_gpu = false;
  mp.print_timings = false;
  mp.n_threads = 2;
  mp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
  mp.warmup = false;
  mtmd_context* mctx = mtmd_init_from_file(argv[2], model, mp);
  if (!mctx) return 1;
  std::vector<mtmd_bitmap*> bitmaps;
  for (int i = 5; i < argc; i++) {
    mtmd_helper_bitmap_wrapper b = mtmd_helper_bitmap_init_from_file(mctx, argv[i], false, mtmd_helper_init_opt_default());
    if (!b.bitmap) return 1;
    bitmaps.push_back(b.bitmap);
  }
  mtmd_input_text text{argv[3], std::strlen(argv[3]), /*add_special=*/true, /*parse_special=*/true};
  mtmd_input_chunks* chunks = mtmd_input_chunks_init();
  if (mtmd_tokenize(mctx, chunks, &text, const_cast<const mtmd_bitmap**>(bitmaps.data()), bitmaps.size())) return 1;

  const int n_embd = llama_model_n_embd_inp(model);
  std::printf("{\"reference\": %s, \"prompt\": %s, \"n_embd\": %d, \"chunks\": [", quoted(argv[4]).c_str(),
              quoted(argv[3]).c_str(), n_embd);
  for (size_t i = 0; i < mtmd_input_chunks_size(chunks); i++) {
    const mtmd_input_chunk* c = mtmd_input_chunks_get(chunks, i);
    std::printf("%s{", i ? ", " : "");
    if (mtmd_input_chunk_get_type(c) == MTMD_INPUT_CHUNK_TYPE_TEXT) {
      size_t n = 0;
      const llama_token* t = mtmd_input_chunk_get_tokens_text(c, &n);
      std::printf("\"tokens\": [");
      for (size_t k = 0; k < n; k++) std::printf("%s%d", k ? ", " : "", t[k]);
      std::printf("]}");
    } else {
      if (mtmd_encode_chunk(mctx, c)) return 1;
      const size_t n = mtmd_input_chunk_get_n_tokens(c);
      std::printf("\"n_embd_tokens\": %zu, \"embd\": ", n);
      floats(mtmd_get_output_embd(mctx), n * size_t(n_embd));
      std::printf("}");
    }
  }
  llama_pos n_past = 0;
  if (mtmd_helper_eval_chunks(mctx, lctx, chunks, 0, 0, 512, true, &n_past)) return 1;
  const llama_vocab* vocab = llama_model_get_vocab(model);
  const int n_vocab = llama_vocab_n_tokens(vocab);
  std::printf("], \"n_past\": %d, \"logits\": ", n_past);
  floats(llama_get_logits_ith(lctx, -1), size_t(n_vocab));
  std::printf(", \"generated_tokens\": [");
  for (int step = 0; step < 8; step++) {
    const float* lg = llama_get_logits_ith(lctx, -1);
    llama_token best = 0;
    for (int t = 1; t < n_vocab; t++)
      if (lg[t] > lg[best]) best = t;
    std::printf("%s%d", step ? ", " : "", best);
    if (llama_decode(lctx, llama_batch_get_one(&best, 1))) return 1;
  }
  std::printf("]}\n");
  return 0;
}
