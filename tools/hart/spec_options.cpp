#include "spec_options.h"

#include <cstdio>

#include "common/error.h"
#include "model/mtp_model.h"

namespace hart::cli {

const std::vector<std::pair<std::string, std::string>> kSpecShortAliases = {
    {"-md", "--spec-draft-model"},
    {"-devd", "--spec-draft-device"},
    {"-lcs", "--lookup-cache-static"},
    {"-lcd", "--lookup-cache-dynamic"}};

void SpecOptions::add_to(CLI::App& app) {
  app.add_option("--spec-type", types,
                 "speculative decoding: a comma-separated list of none, ngram-simple, ngram-cache, draft-simple, draft-mtp "
                 "(default: none)");
  app.add_option("--spec-draft-model,--model-draft", draft_model, "draft model (GGUF) for --spec-type draft-simple (also -md)");
  app.add_option("--spec-draft-n-max", p.n_max, "tokens a draft model drafts per step")->capture_default_str();
  app.add_option("--spec-draft-n-min", p.n_min, "a shorter draft of a draft model is not verified")
      ->capture_default_str();
  app.add_option("--spec-draft-p-min,--draft-p-min", p.p_min,
                 "a draft model stops drafting at a token it gives less probability (greedy)")
      ->capture_default_str();
  app.add_option("--spec-draft-device,--device-draft", draft_devices,
                 "devices of the draft model, e.g. et,cpu (default: --device's; also -devd)")
      ->delimiter(',');
  app.add_option("--spec-ngram-simple-size-n", p.ngram_size_n, "ngram-simple: length of the n-gram looked up")
      ->capture_default_str();
  app.add_option("--spec-ngram-simple-size-m", p.ngram_size_m, "ngram-simple: length of the draft after it")
      ->capture_default_str();
  app.add_option("--lookup-cache-static", p.lookup_cache_static,
                 "ngram-cache: static lookup cache (llama-lookup-create's file; not updated; also -lcs)");
  app.add_option("--lookup-cache-dynamic", p.lookup_cache_dynamic,
                 "ngram-cache: dynamic lookup cache, updated with each generation's text (also -lcd)");
  app.add_option("--spec-synth-len", p.synth_len,
                 "benchmarking: accept draft tokens at random for this mean accepted length, the target token "
                 "included (the output is not the model's)");
  app.add_option("--spec-synth-rates", p.synth_rates,
                 "benchmarking: per draft position, the chance it is accepted, e.g. 0.9,0.8,0.7 (non-increasing)")
      ->delimiter(',');
  // llama.cpp removed these; it refuses them naming the new flag, and so does hart.
  for (const char* removed : {"--draft,--draft-n,--draft-max", "--draft-min,--draft-n-min"}) {
    const bool is_min = std::string(removed).find("min") != std::string::npos;
    app.add_option_function<int>(
           removed,
           [is_min](int) {
             throw Error(std::string("this flag was removed (as in llama.cpp): use ") +
                         (is_min ? "--spec-draft-n-min" : "--spec-draft-n-max"));
           },
           is_min ? "removed: use --spec-draft-n-min" : "removed: use --spec-draft-n-max")
        ->group("");
  }
}

bool SpecOptions::enabled(int n_batch) {
  p.types = spec::types_from_list(types);
  if (!draft_model.empty() && !p.uses_draft_model())
    throw Error("-md/--spec-draft-model needs --spec-type draft-simple");
  if (p.uses_draft_model() && draft_model.empty()) throw Error("--spec-type draft-simple needs -md/--spec-draft-model");
  p.validate(n_batch);
  return !p.types.empty();
}

Speculation make_speculation(const SpecOptions& opt, const ModelOptions& mo, const LoadedModel& target,
                             const SamplerParams* sampling, int threads) {
  Speculation s;
  std::unique_ptr<spec::DraftSessions> sessions;
  if (opt.p.uses_draft_model()) {
    ModelOptions dmo = mo;
    dmo.model = opt.draft_model;
    dmo.lora.clear();  // adapters are the target's
    dmo.lora_scaled.clear();
    if (!opt.draft_devices.empty()) dmo.devices = opt.draft_devices;
    s.draft = std::make_unique<LoadedModel>(load_model(dmo));
    spec::check_compatible(*target.tokenizer, *s.draft->tokenizer);
    // The draft follows the target's whole sequence: its context is the target's.
    SessionParams dsp = mo.session_params();
    dsp.lora.clear();
    if (dsp.n_ctx == 0) dsp.n_ctx = default_n_ctx(target.model->hp);
    sessions = std::make_unique<spec::DraftSessions>(*s.draft->model, dsp, [dmo, threads] { return dmo.backends(threads); });
  }
  std::unique_ptr<spec::DraftSessions> mtp_sessions;
  if (opt.p.uses_mtp()) {
    s.mtp = mtp_model(*target.model);
    SessionParams msp = mo.session_params();
    msp.lora.clear();
    msp.keep_hidden = true;  // each draft step reads the block's own output
    if (msp.n_ctx == 0) msp.n_ctx = default_n_ctx(target.model->hp);
    mtp_sessions = std::make_unique<spec::DraftSessions>(*s.mtp, msp, [mo, threads] { return mo.backends(threads); });
  }
  s.factory = std::make_unique<spec::SpecFactory>(opt.p, target.model->hp.n_vocab, std::move(sessions),
                                                  std::move(mtp_sessions));
  if (sampling) s.speculator = s.factory->make(opt.p, *sampling);
  if (!opt.p.synth_probs().empty())
    std::fprintf(stderr, "hart: synthetic speculative acceptance (benchmarking): the output is not the model's\n");
  return s;
}

void Speculation::save_dynamic_cache(const std::vector<int32_t>& tokens) const {
  if (!factory || !factory->caches()) return;
  factory->caches()->update_dynamic(tokens);
  factory->caches()->save_dynamic();
}

void print_spec_stats(const spec::SpecStats& s) {
  std::fprintf(stderr, "hart: draft acceptance %.3f (%lld accepted / %lld drafted, %lld verification steps)\n",
               s.acceptance(), (long long)s.n_accepted, (long long)s.n_drafted, (long long)s.n_verified);
}

}  // namespace hart::cli
