#include "bench_spec.h"

namespace hart::cli {
namespace {

struct Run {
  std::vector<int32_t> tokens;
  double tps = 0;
  spec::SpecStats stats;
};

// One greedy generation of n_gen tokens (end-of-generation tokens included: every run is as long).
Run generate_once(Session& session, spec::Speculator* speculator, std::span<const int32_t> prompt, int n_gen) {
  session.truncate(0);
  SamplerParams greedy;
  greedy.temperature = 0.0f;
  Sampler sampler(greedy, session.model().hp.n_vocab);
  Run r;
  GenerateOptions go;
  go.n_predict = n_gen;
  go.on_token = [&](int32_t t) {
    r.tokens.push_back(t);
    return true;
  };
  const GenerateStats st = speculator ? spec::generate(session, sampler, prompt, go, *speculator, r.stats)
                                      : generate(session, sampler, prompt, go);
  r.tps = st.generate_ms > 0 ? st.n_generated * 1e3 / st.generate_ms : 0.0;
  return r;
}

}  // namespace

SpecBenchRuns bench_speculative(Session& session, spec::Speculator& speculator, std::span<const int32_t> prompt,
                                int n_gen, int warmup, int reps) {
  SpecBenchRuns out;
  for (int r = 0; r < warmup + reps; r++) {
    const Run plain = generate_once(session, nullptr, prompt, n_gen);
    const Run spec = generate_once(session, &speculator, prompt, n_gen);
    if (r == 0) out.plain_cold = plain.tps, out.spec_cold = spec.tps;
    if (r >= warmup) out.plain_tps.push_back(plain.tps), out.spec_tps.push_back(spec.tps);
    out.same_tokens = out.same_tokens && plain.tokens == spec.tokens;
    out.stats = spec.stats;
    out.n_generated = int(plain.tokens.size());
  }
  return out;
}

}  // namespace hart::cli
