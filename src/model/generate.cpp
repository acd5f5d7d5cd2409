#include "model/generate.h"

#include <chrono>
#include <string>

#include "common/error.h"

namespace hart {
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

GenerateStats generate(Session& session, Sampler& sampler, std::span<const int32_t> prompt,
                       const GenerateOptions& opt) {
  if (prompt.empty()) throw Error("the prompt has no tokens");
  GenerateStats st;
  st.n_prompt = int(prompt.size());
  for (int32_t t : prompt) sampler.accept(t);

  auto t0 = std::chrono::steady_clock::now();
  std::span<const float> logits = session.decode(prompt);
  st.prompt_ms = ms_since(t0);
  if (opt.logits_step0) opt.logits_step0->assign(logits.begin(), logits.end());

  t0 = std::chrono::steady_clock::now();
  while (opt.n_predict < 0 || st.n_generated < opt.n_predict) {
    const int32_t tok = sampler.sample(logits);
    sampler.accept(tok);
    if (opt.is_eog && opt.is_eog(tok)) break;
    st.n_generated++;
    if (opt.on_token && !opt.on_token(tok)) break;
    if (opt.n_predict >= 0 && st.n_generated >= opt.n_predict) break;
    if (opt.context_shift_keep >= 0 && session.n_past() + 1 >= session.n_ctx()) {
      const int keep = opt.context_shift_keep, n_discard = (session.n_past() - keep) / 2;
      if (n_discard <= 0)
        throw Error("context shift: keeping " + std::to_string(keep) + " tokens leaves none to forget in a context of " +
                    std::to_string(session.n_ctx()));
      session.shift(keep, n_discard);
      st.n_shifts++;
    } else if (session.n_past() >= session.n_ctx()) {
      st.context_full = true;
      break;
    }
    const int32_t one[1] = {tok};
    logits = session.decode(one);
  }
  st.generate_ms = ms_since(t0);
  return st;
}

}  // namespace hart
