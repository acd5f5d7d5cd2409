// Writes one golden case in the format of ../shared/testdata/archs/golden from llama.cpp itself,
// for what that folder lacks: prompts far longer than a sliding window, prefilled in chunks.
// Not part of hart's build: compile it against a llama.cpp build (tools/llamacpp-golden/make).
// As the shared goldens: n_ctx 1024, F32 K and V cache, flash attention off, the prompt
// tokenized with add_special and parse_special, then 32 greedy tokens (lowest id on ties).
//   dump_golden MODEL N_BATCH TEXT REFERENCE   -> JSON on stdout (prompt decoded in steps of N_BATCH;
//   REFERENCE names the llama.cpp build)
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "llama.h"

namespace {

// JSON string literal (the prompts are ASCII text).
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: dump_golden MODEL N_BATCH TEXT REFERENCE\n");
    return 2;
  }
  const std::string path = argv[1], text = argv[3];
  const int n_batch = std::atoi(argv[2]);
  llama_backend_init();
  llama_model* model = llama_model_load_from_file(path.c_str(), llama_model_default_params());
  if (!model) return 1;
  const llama_vocab* vocab = llama_model_get_vocab(model);
  std::vector<llama_token> prompt(text.size() + 8);
  const int n_prompt = llama_tokenize(vocab, text.c_str(), int(text.size()), prompt.data(), int(prompt.size()), true, true);
  if (n_prompt < 0) return 1;
  prompt.resize(size_t(n_prompt));

  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = 1024;
  cp.n_batch = cp.n_ubatch = 1024;
  cp.n_seq_max = 1;
  cp.type_k = cp.type_v = GGML_TYPE_F32;
  cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
  cp.n_threads = cp.n_threads_batch = 2;
  llama_context* ctx = llama_init_from_model(model, cp);
  const int n_vocab = llama_vocab_n_tokens(vocab);
  for (int done = 0; done < n_prompt;) {
    const int n = std::min(n_batch, n_prompt - done);
    if (llama_decode(ctx, llama_batch_get_one(prompt.data() + done, n))) return 1;
    done += n;
  }
  std::vector<float> logits0(llama_get_logits_ith(ctx, -1), llama_get_logits_ith(ctx, -1) + n_vocab);
  std::vector<int> generated;
  std::vector<float> margins;
  const float* l = logits0.data();
  for (int step = 0; step < 32; step++) {
    int best = 0, second = -1;
    for (int i = 1; i < n_vocab; i++) {
      if (l[i] > l[best]) second = best, best = i;
      else if (second < 0 || l[i] > l[second]) second = i;
    }
    generated.push_back(best);
    margins.push_back(l[best] - l[second]);
    llama_token t = best;
    if (llama_decode(ctx, llama_batch_get_one(&t, 1))) return 1;
    l = llama_get_logits_ith(ctx, -1);
  }

  auto list = [](const auto& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); i++) s += (i ? "," : "") + std::to_string(v[i]);
    return s + "]";
  };
  std::string floats = "[";
  for (size_t i = 0; i < logits0.size(); i++) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.9g", i ? "," : "", logits0[i]);
    floats += buf;
  }
  floats += "]";
  std::string margin_list = "[";
  for (size_t i = 0; i < margins.size(); i++) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.7g", i ? "," : "", margins[i]);
    margin_list += buf;
  }
  margin_list += "]";
  const std::string name = path.substr(path.find_last_of('/') + 1);
  std::printf("{\"model\":%s,\"prompt\":%s,\"n_batch\":%d,\"prompt_tokens\":%s,\"generated_tokens\":%s,"
              "\"top2_margin\":%s,\"logits_step0\":%s,\"reference\":%s}\n",
              quoted(name).c_str(), quoted(text).c_str(), n_batch, list(prompt).c_str(), list(generated).c_str(),
              margin_list.c_str(), floats.c_str(),
              quoted(std::string(argv[4]) + " (CPU; n_ctx 1024, F32 KV cache, flash attention off, prompt in steps of n_batch)").c_str());
  llama_free(ctx);
  llama_model_free(model);
  return 0;
}
