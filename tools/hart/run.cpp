// hart run: generate text from a prompt, streaming it to stdout (or one JSON object with --json).
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "command.h"
#include "parse_args.h"
#include "common/error.h"
#include "model/generate.h"
#include "grammar_options.h"
#include "model_options.h"
#include "print.h"
#include "spec_options.h"
#include "tokenizer/text_output.h"
#include "vision/multimodal.h"
#include "vision_options.h"

namespace hart::cli {
namespace {

int cmd_run(int argc, char** argv) {
  CLI::App app{"Generate text from a prompt (streams to stdout)", "hart run"};
  ModelOptions mo;
  SamplingOptions so;
  GrammarOptions grammar_opts;
  SpecOptions spo;
  VisionOptions vo;
  std::string prompt;
  int n_predict = 128, n_keep = 0;
  bool json = false, logits = false, ignore_eos = false, verbose = false, context_shift = false;
  mo.add_to(app);
  so.add_to(app);
  grammar_opts.add_to(app);
  spo.add_to(app);
  vo.add_to(app, /*with_images=*/true);
  app.add_option("-p,--prompt", prompt, "prompt text (special tokens parsed; default: BOS alone)");
  app.add_option("-n,--n-predict", n_predict, "tokens to generate (-1: until end of text)")
      ->capture_default_str();
  app.add_flag("--json", json, "print one JSON object: tokens, text, timings");
  app.add_flag("--logits", logits, "with --json: include the first generated step's logits");
  app.add_flag("--ignore-eos", ignore_eos, "keep generating past end-of-generation tokens");
  app.add_flag("--context-shift,!--no-context-shift", context_shift,
               "when the context fills, forget half of it after the first --keep tokens and go on");
  app.add_option("--keep", n_keep, "prompt tokens a context shift keeps, besides BOS (-1: the whole prompt)")
      ->capture_default_str();
  app.add_flag("-v,--verbose", verbose, "print the model's shape and the weight bytes a token reads to stderr");
  if (!parse_args(app, argc, argv, kSpecShortAliases)) return 0;
  if (print_devices_if_asked(mo)) return 0;
  SessionParams sp = mo.session_params();
  sp.speculative = spo.enabled(sp.n_batch);
  sp.keep_hidden = spo.p.uses_mtp();
  if (sp.speculative && context_shift)  // a shift would move positions a tentative step may take back
    throw Error("--context-shift does not go with speculative decoding (--spec-type)");
  const bool have_prompt = app.count("--prompt") > 0;
  const auto grammar = grammar_opts.load();  // before loading the model: a bad grammar fails fast
  vo.check();
  if (sp.speculative && !vo.images.empty()) throw Error("speculative decoding does not take images (--image)");
  // --keep counts the text generate() is given, which with images is only what follows the last one.
  if (context_shift && !vo.images.empty()) throw Error("--context-shift does not take images (--image)");
  std::vector<vision::RgbImage> images;
  for (const std::string& path : vo.images) images.push_back(vision::load_image(path));

  LoadedModel lm = load_model(mo);
  const Tokenizer& tok = *lm.tokenizer;
  if (verbose) {
    const Model& m = *lm.model;
    std::fprintf(stderr, "hart: %s, %d layers, %d-wide, vocabulary %d; weights %.1f MiB, %s\n",
                 m.hp.arch_name.c_str(), m.hp.n_layer, m.hp.n_embd, m.hp.n_vocab,
                 double(m.weight_bytes) / (1 << 20), describe_decode_reads(m).c_str());
  }
  std::optional<vision::EncodedPrompt> encoded;
  if (!images.empty()) {
    // The encoder's backends (a device, with --device) are released before the session opens its own.
    const Vision vis = load_vision(vo, mo, lm);
    encoded = vision::encode_prompt(*vis.clip, *vis.encoder, tok, with_markers(prompt, images.size()), images, true);
  } else if (!vo.mmproj.empty()) {
    load_vision(vo, mo, lm);  // checked even without an image: a wrong projector is an error
  }
  Session session(*lm.model, sp, mo.backends());
  std::vector<int32_t> prompt_tokens;
  int n_image_tokens = 0;
  if (encoded) {
    // Everything before the prompt's last text goes into the session here; generate() takes that text.
    prompt_tokens = vision::decode_all_but_last(session, *encoded);
    n_image_tokens = encoded->n_tokens();
    for (const vision::PromptChunk& c : encoded->chunks) n_image_tokens -= int(c.tokens.size());
  } else if (have_prompt) {
    prompt_tokens = tok.encode(prompt, /*add_special=*/true, /*parse_special=*/true);
  } else {
    if (tok.bos() < 0) throw Error("the model has no BOS token: give a prompt with -p");
    prompt_tokens = {tok.bos()};
  }
  if (prompt_tokens.empty()) throw Error("the prompt is empty after tokenization");

  Speculation speculation;
  if (sp.speculative) speculation = make_speculation(spo, mo, lm, &so.p);
  Sampler sampler(so.p, lm.model->hp.n_vocab);
  ConstrainedSampling constrained;
  constrained.attach(grammar, tok, sampler);
  TextOutput stream(tok, {}, {}, /*at_text_start=*/!have_prompt);
  std::vector<int32_t> generated;
  std::string text;  // --json's: the text the stream would have printed
  const auto out = [&](const std::string& piece) {
    if (json) text += piece;
    else print(piece);
  };
  std::vector<float> logits0;
  GenerateOptions go;
  go.n_predict = n_predict;
  if (!ignore_eos) go.is_eog = [&](int32_t t) { return tok.is_eog(t); };
  go.on_token = [&](int32_t t) {
    generated.push_back(t);
    out(stream.push(t));
    return constrained.accept(t);
  };
  if (json && logits) go.logits_step0 = &logits0;
  if (context_shift) {  // llama-completion's n_keep: the prompt's first tokens, BOS always among them
    const int n = int(prompt_tokens.size());
    go.context_shift_keep = n_keep < 0 || n_keep > n ? n : n_keep + (tok.add_bos() ? 1 : 0);
  }
  spec::SpecStats spec_stats;
  const GenerateStats st = sp.speculative
                               ? spec::generate(session, sampler, prompt_tokens, go, *speculation.speculator, spec_stats)
                               : generate(session, sampler, prompt_tokens, go);
  out(stream.flush());
  if (sp.speculative) {
    std::vector<int32_t> all = prompt_tokens;
    all.insert(all.end(), generated.begin(), generated.end());
    speculation.save_dynamic_cache(all);
  }

  if (json) {
    nlohmann::json j;
    j["prompt_tokens"] = prompt_tokens;  // with images: the text after the last one
    if (!images.empty()) j["n_image_tokens"] = n_image_tokens;
    j["generated_tokens"] = generated;
    j["text"] = text;
    j["timings"] = {{"prompt_ms", st.prompt_ms},
                    {"generate_ms", st.generate_ms},
                    {"prompt_tokens_per_s", st.prompt_ms > 0 ? st.n_prompt * 1e3 / st.prompt_ms : 0},
                    {"generate_tokens_per_s",
                     st.generate_ms > 0 ? st.n_generated * 1e3 / st.generate_ms : 0}};
    // llama-server's names
    if (sp.speculative) j["timings"].update({{"draft_n", spec_stats.n_drafted}, {"draft_n_accepted", spec_stats.n_accepted}});
    j["context_full"] = st.context_full;
    j["context_shifts"] = st.n_shifts;
    if (logits) j["logits_step0"] = logits0;
    std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  }
  if (st.context_full)
    std::fprintf(stderr, "hart: the context is full (%d tokens, -c): generation stopped; --context-shift forgets "
                 "half of it and goes on\n", session.n_ctx());
  if (!json) {
    std::printf("\n");
    std::fprintf(stderr, "hart: prompt %d tokens in %.1f ms (%.1f tok/s), generated %d tokens in %.1f ms (%.1f tok/s)%s\n",
                 st.n_prompt, st.prompt_ms, st.prompt_ms > 0 ? st.n_prompt * 1e3 / st.prompt_ms : 0.0,
                 st.n_generated, st.generate_ms,
                 st.generate_ms > 0 ? st.n_generated * 1e3 / st.generate_ms : 0.0,
                 st.n_shifts > 0 ? (", " + std::to_string(st.n_shifts) + " context shifts").c_str() : "");
    if (sp.speculative) print_spec_stats(spec_stats);
  }
  return 0;
}

}  // namespace

HART_COMMAND(run, "generate text from a prompt", cmd_run);

}  // namespace hart::cli
