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

Generator::Generator(Session& session, Sampler& sampler, std::span<const int32_t> prompt, const GenerateOptions& opt)
    : session_(session), sampler_(sampler), opt_(opt) {
  if (prompt.empty()) throw Error("the prompt has no tokens");
  st_.n_prompt = int(prompt.size());
  for (int32_t t : prompt) sampler_.accept(t);
  logits_ = session_.decode(prompt);
  if (opt_.logits_step0) opt_.logits_step0->assign(logits_.begin(), logits_.end());
}

std::optional<int32_t> Generator::next() {
  const auto limit_reached = [&] { return opt_.n_predict >= 0 && st_.n_generated >= opt_.n_predict; };
  if (ended_ || limit_reached()) {
    ended_ = true;
    return std::nullopt;
  }
  if (pending_) {  // the last token returned goes into the context now that another is wanted
    if (opt_.context_shift_keep >= 0 && session_.n_past() + 1 >= session_.n_ctx()) {
      const int keep = opt_.context_shift_keep, n_discard = (session_.n_past() - keep) / 2;
      if (n_discard <= 0)
        throw Error("context shift: keeping " + std::to_string(keep) + " tokens leaves none to forget in a context of " +
                    std::to_string(session_.n_ctx()));
      session_.shift(keep, n_discard);
      st_.n_shifts++;
    } else if (session_.n_past() >= session_.n_ctx()) {
      st_.context_full = true;
      ended_ = true;
      return std::nullopt;
    }
    const int32_t one[1] = {*pending_};
    pending_.reset();
    logits_ = session_.decode(one);
  }
  const int32_t tok = sampler_.sample(logits_);
  sampler_.accept(tok);
  if (opt_.is_eog && opt_.is_eog(tok)) {
    ended_ = true;
    return std::nullopt;
  }
  st_.n_generated++;
  pending_ = tok;
  return tok;
}

GenerateStats generate(Session& session, Sampler& sampler, std::span<const int32_t> prompt,
                       const GenerateOptions& opt) {
  auto t0 = std::chrono::steady_clock::now();
  Generator g(session, sampler, prompt, opt);
  const double prompt_ms = ms_since(t0);
  t0 = std::chrono::steady_clock::now();
  while (const std::optional<int32_t> tok = g.next())
    if (opt.on_token && !opt.on_token(*tok)) break;
  GenerateStats st = g.stats();
  st.prompt_ms = prompt_ms;
  st.generate_ms = ms_since(t0);
  return st;
}

}  // namespace hart
