#include "spec/speculative.h"

#include <algorithm>
#include <chrono>

#include "common/error.h"
#include "spec/verify.h"

namespace hart::spec {
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

Speculator::Speculator(const SpecParams& params, std::vector<std::unique_ptr<Drafter>> drafters)
    : drafters_(std::move(drafters)), max_draft_(params.max_draft()), synth_probs_(params.synth_probs()) {}

void Speculator::bind(HiddenRows& target) {
  for (auto& d : drafters_) d->bind(target);
}

void Speculator::draft(std::span<const int32_t> history, int n_max, Draft& out) {
  out.clear();
  for (auto& d : drafters_) {
    d->draft(history, n_max, out);
    if (out.tokens.empty()) continue;
    if (int(out.tokens.size()) > n_max) {
      out.tokens.resize(size_t(n_max));
      if (!out.q.empty()) out.q.resize(size_t(n_max));
    }
    return;
  }
}

double Speculator::synth_uniform() { return std::uniform_real_distribution<double>(0.0, 1.0)(synth_rng_); }

Speculator::Verified Speculator::verify(const Draft& draft, std::span<const float> rows, int n_vocab, Sampler& sampler,
                                        const std::function<bool(int32_t)>& is_eog,
                                        const std::function<bool(int32_t)>& keep) {
  const int k = int(draft.tokens.size());
  Verified out{0, -1};
  for (int i = 0; i <= k; i++) {
    const std::span<const float> row = rows.subspan(size_t(i) * size_t(n_vocab), size_t(n_vocab));
    const int32_t x = i < k ? draft.tokens[size_t(i)] : -1;
    Verdict v{-1, false};
    if (i < k && !synth_probs_.empty()) {
      const int32_t t = sampler.sample(row);
      // As llama.cpp's server: a refused draft token ends the step with the target's own token,
      // even where that is the same token (the rates are the acceptance, whatever the model says).
      const bool kept = synth_uniform() < synth_probs_[size_t(i)] && !(is_eog && is_eog(x));
      v = kept ? Verdict{x, true} : Verdict{t, false};
    } else if (i < k && !draft.q.empty()) {
      sampler.distribution(row, p_);
      const double u_keep = sampler.uniform();
      v = speculative_sample(p_, draft.q[size_t(i)], x, u_keep, sampler.uniform());
      sampler.note_choice(row, v.token);
    } else {
      const int32_t t = sampler.sample(row);
      v = {t, t == x};
    }
    if (!v.kept) {
      out.next = v.token;
      return out;
    }
    out.n_kept++;
    if (!keep(x)) return out;
  }
  return out;  // not reached: row k keeps no draft token
}

GenerateStats generate(Session& session, Sampler& sampler, std::span<const int32_t> prompt,
                       const GenerateOptions& opt, Speculator& spec, SpecStats& stats,
                       std::span<const int32_t> context) {
  if (prompt.empty()) throw Error("the prompt has no tokens");
  GenerateStats st;
  st.n_prompt = int(prompt.size());
  if (int(context.size()) != session.n_past())
    throw Error("speculative decoding: the context given is not what the session holds");
  if (HiddenRows* h = session.hidden_rows()) spec.bind(*h);
  std::vector<int32_t> history(context.begin(), context.end());
  history.insert(history.end(), prompt.begin(), prompt.end());
  for (int32_t t : prompt) sampler.accept(t);

  auto t0 = std::chrono::steady_clock::now();
  std::span<const float> logits = session.decode(prompt);
  st.prompt_ms = ms_since(t0);
  if (opt.logits_step0) opt.logits_step0->assign(logits.begin(), logits.end());
  const int n_vocab = session.model().hp.n_vocab;

  // A token the target chose, at position `pos`: as generate() does, false when generation ends.
  const auto produce = [&](int32_t tok, int pos) {
    sampler.accept(tok);
    if (opt.is_eog && opt.is_eog(tok)) return false;
    st.n_generated++;
    history.push_back(tok);
    if (opt.on_token && !opt.on_token(tok)) return false;
    if (pos >= session.n_ctx()) {  // context full: stop, as llama.cpp does
      st.context_full = true;
      return false;
    }
    return opt.n_predict < 0 || st.n_generated < opt.n_predict;
  };

  t0 = std::chrono::steady_clock::now();
  Draft draft;
  std::vector<int32_t> batch;
  int32_t tok = sampler.sample(logits);
  while (produce(tok, session.n_past())) {
    // The verification batch is [tok, draft...] at positions n_past..: it must fit the context,
    // and the draft no more tokens than may still be generated after tok.
    int room = session.n_ctx() - session.n_past() - 1;
    if (opt.n_predict >= 0) room = std::min(room, opt.n_predict - st.n_generated);
    room = std::min(room, spec.max_draft());
    draft.clear();
    if (room > 0) spec.draft(history, room, draft);
    const int k = int(draft.tokens.size());
    if (k == 0) {
      const int32_t one[1] = {tok};
      tok = sampler.sample(session.decode(one));
      continue;
    }
    batch.assign(1, tok);
    batch.insert(batch.end(), draft.tokens.begin(), draft.tokens.end());
    session.begin_tentative();
    const std::span<const float> rows = session.decode(batch, /*all_logits=*/true);
    stats.n_drafted += k;
    stats.n_verified++;
    int i = 0;
    const Speculator::Verified v = spec.verify(draft, rows, n_vocab, sampler, opt.is_eog, [&](int32_t x) {
      // A token that ends the generation is not computed, as generate() leaves its last one.
      return produce(x, session.n_kept() + ++i);
    });
    stats.n_accepted += v.n_kept;
    // The tokens computed and kept: tok and the draft tokens kept, but for one that ended it.
    session.keep(1 + v.n_kept - (v.next < 0 ? 1 : 0));
    if (v.next < 0) break;
    tok = v.next;
  }
  st.generate_ms = ms_since(t0);
  return st;
}

}  // namespace hart::spec
