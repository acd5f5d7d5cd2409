// hart bench's speculative test: greedy generation of n tokens from a prompt, plain and with the
// speculation --spec-type names, by turns (plain, speculative, plain, ...) so that a machine busy
// with something else slows both alike. Reported side by side: the tokens/s of each, the drafted
// and accepted tokens, and whether both runs generated the same tokens (they must, except under
// synthetic acceptance, whose output is not the model's).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/session.h"
#include "spec/speculative.h"

namespace hart::cli {

struct SpecBenchRuns {
  std::vector<double> plain_tps, spec_tps;  // the measured runs'
  double plain_cold = 0, spec_cold = 0;     // the first run's of each
  spec::SpecStats stats;                    // the last speculative run's drafts
  int n_generated = 0;                      // per run
  bool same_tokens = true;                  // every speculative run's tokens were the plain run's
};

// `session` is the target's (SessionParams::speculative set); each run starts it empty.
SpecBenchRuns bench_speculative(Session& session, spec::Speculator& speculator, std::span<const int32_t> prompt,
                                int n_gen, int warmup, int reps);

}  // namespace hart::cli
