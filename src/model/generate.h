// The generation loop shared by `hart run`, `hart chat`, the benchmark and the C API: prefill the
// prompt as one batch, then sample and decode one token at a time. Generator is the loop one
// token a call (what a caller that pulls tokens, such as the C API's hart_generation, drives);
// generate() runs it to the end with a callback.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "model/session.h"
#include "sample/sampler.h"

namespace hart {

struct GenerateStats {
  int n_prompt = 0;
  int n_generated = 0;
  double prompt_ms = 0;    // prefill wall time
  double generate_ms = 0;  // wall time of the decode steps
  bool context_full = false;  // stopped because the context was full (no context shift)
  int n_shifts = 0;           // context shifts made
};

struct GenerateOptions {
  int n_predict = 128;                   // < 0: until end of generation or context full
  std::function<bool(int32_t)> is_eog;   // stop tokens (not emitted); may be empty
  // generate()'s callback, with each generated token; return false to stop. (A Generator's
  // caller takes the tokens from next() instead.)
  std::function<bool(int32_t)> on_token;
  std::vector<float>* logits_step0 = nullptr;  // receives the first step's full logits
  // >= 0: llama.cpp's context shift. When the next token would take the context's last position
  // (llama-completion's test), the session forgets half of the positions after the first
  // context_shift_keep (Session::shift) and generation goes on. < 0: generation stops once the
  // context is full, with GenerateStats::context_full set.
  int context_shift_keep = -1;
};

// The loop, a token at a time. The constructor appends the prompt to the session (which may
// already hold a prefix) and computes its logits; each next() decodes the token it returned
// before (making room as the options say), then samples the next one. A token is decoded only
// when the next one is asked for, so a caller that stops leaves the session as generate() does
// when its callback returns false: holding the prompt and every generated token but the last.
// The session and the sampler must outlive the generator and not be used by others meanwhile.
class Generator {
 public:
  Generator(Session& session, Sampler& sampler, std::span<const int32_t> prompt, const GenerateOptions& opt);
  // The next generated token; nothing once the generation has ended (an end-of-generation
  // token, n_predict tokens, a full context), and on every call after that.
  std::optional<int32_t> next();
  // Counts so far (the timings are generate()'s).
  const GenerateStats& stats() const { return st_; }

 private:
  Session& session_;
  Sampler& sampler_;
  GenerateOptions opt_;
  GenerateStats st_;
  std::span<const float> logits_;  // of the last decoded token
  std::optional<int32_t> pending_;  // returned by next(), not decoded yet
  bool ended_ = false;
};

// Appends `prompt` to the session (which may already hold a prefix) and generates.
GenerateStats generate(Session& session, Sampler& sampler, std::span<const int32_t> prompt,
                       const GenerateOptions& opt);

}  // namespace hart
