// The generation loop shared by `hart run`, `hart chat` and the benchmark: prefill the prompt as
// one batch, then sample and decode one token at a time.
#pragma once

#include <cstdint>
#include <functional>
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
  // Called with each generated token; return false to stop.
  std::function<bool(int32_t)> on_token;
  std::vector<float>* logits_step0 = nullptr;  // receives the first step's full logits
  // >= 0: llama.cpp's context shift. When the next token would take the context's last position
  // (llama-completion's test), the session forgets half of the positions after the first
  // context_shift_keep (Session::shift) and generation goes on. < 0: generation stops once the
  // context is full, with GenerateStats::context_full set.
  int context_shift_keep = -1;
};

// Appends `prompt` to the session (which may already hold a prefix) and generates.
GenerateStats generate(Session& session, Sampler& sampler, std::span<const int32_t> prompt,
                       const GenerateOptions& opt);

}  // namespace hart
