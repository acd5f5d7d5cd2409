#include "spec/verify.h"

#include <algorithm>
#include <vector>

namespace hart::spec {
namespace {

double prob_of(std::span<const TokenProb> d, int32_t token) {
  for (const TokenProb& t : d)
    if (t.token == token) return t.p;
  return 0.0;
}

}  // namespace

Verdict speculative_sample(std::span<const TokenProb> p, std::span<const TokenProb> q, int32_t x, double u_keep,
                           double u_draw) {
  const double px = prob_of(p, x), qx = prob_of(q, x);
  if (qx > 0.0 && u_keep * qx < px) return {x, true};  // u < p(x) / q(x)
  // The residual max(0, p - q): q sorted by token for the lookups.
  std::vector<TokenProb> qs(q.begin(), q.end());
  std::sort(qs.begin(), qs.end(), [](const TokenProb& a, const TokenProb& b) { return a.token < b.token; });
  const auto q_of = [&](int32_t token) {
    const auto it = std::lower_bound(qs.begin(), qs.end(), token,
                                     [](const TokenProb& a, int32_t t) { return a.token < t; });
    return it != qs.end() && it->token == token ? double(it->p) : 0.0;
  };
  double total = 0.0;
  for (const TokenProb& t : p) total += std::max(0.0, double(t.p) - q_of(t.token));
  const bool residual = total > 0.0;  // else p == q up to rounding: p itself
  if (!residual) total = 1.0;
  double u = u_draw * total;
  int32_t last = p.empty() ? x : p.back().token;
  for (const TokenProb& t : p) {
    const double w = residual ? std::max(0.0, double(t.p) - q_of(t.token)) : double(t.p);
    if (w <= 0.0) continue;
    last = t.token;
    if (u < w) return {t.token, t.token == x};
    u -= w;
  }
  return {last, last == x};  // u landed in the rounding gap at the end
}

}  // namespace hart::spec
