#include "spec/spec_params.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "common/error.h"

namespace hart::spec {
namespace {

struct Named {
  const char* name;
  SpecType type;
};
// In llama.cpp's order of priority (common_speculative_init): the n-gram types, then the drafts.
constexpr Named kTypes[] = {{"ngram-simple", SpecType::NGRAM_SIMPLE},
                            {"ngram-cache", SpecType::NGRAM_CACHE},
                            {"draft-simple", SpecType::DRAFT_SIMPLE},
                            {"draft-mtp", SpecType::DRAFT_MTP}};
constexpr const char* kNotInHart[] = {"draft-eagle3", "draft-dflash", "draft-dspark",
                                      "ngram-map-k", "ngram-map-k4v", "ngram-mod"};
// ngram-cache drafts this many tokens (llama.cpp's create_state_ngram_cache).
constexpr int kNgramCacheDraft = 8;

}  // namespace

const char* type_name(SpecType t) {
  for (const Named& n : kTypes)
    if (n.type == t) return n.name;
  return "none";
}

SpecType type_from_name(const std::string& name) {
  if (name == "none") return SpecType::NONE;
  for (const Named& n : kTypes)
    if (name == n.name) return n.type;
  for (const char* n : kNotInHart)
    if (name == n) throw Error("--spec-type " + name + " is llama.cpp's but not implemented in hart");
  throw Error("unknown --spec-type '" + name + "' (none, ngram-simple, ngram-cache, draft-simple, draft-mtp)");
}

std::vector<SpecType> types_from_list(const std::string& list) {
  std::vector<SpecType> named;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    const SpecType t = type_from_name(item);
    if (t != SpecType::NONE) named.push_back(t);
  }
  std::vector<SpecType> out;
  for (const Named& n : kTypes)
    if (std::find(named.begin(), named.end(), n.type) != named.end()) out.push_back(n.type);
  return out;
}

bool SpecParams::has(SpecType t) const { return std::find(types.begin(), types.end(), t) != types.end(); }

int SpecParams::max_draft() const {
  int n = 0;
  for (SpecType t : types) {
    switch (t) {
      case SpecType::DRAFT_SIMPLE:
      case SpecType::DRAFT_MTP: n = std::max(n, n_max); break;
      case SpecType::NGRAM_SIMPLE: n = std::max(n, ngram_size_m); break;
      case SpecType::NGRAM_CACHE: n = std::max(n, kNgramCacheDraft); break;
      case SpecType::NONE: break;
    }
  }
  return draft_limit > 0 ? std::min(n, draft_limit) : n;
}

void SpecParams::validate(int n_batch) const {
  const auto fail = [](const std::string& what) { throw Error(what); };
  if (types.empty()) {
    if (synth_len != -1.0 || !synth_rates.empty()) fail("--spec-synth-len/--spec-synth-rates need a --spec-type");
    return;
  }
  if (has(SpecType::DRAFT_SIMPLE) && has(SpecType::DRAFT_MTP))
    fail("--spec-type draft-simple and draft-mtp do not go together (llama.cpp's one draft context)");
  if (has(SpecType::DRAFT_SIMPLE) || has(SpecType::DRAFT_MTP)) {
    if (n_max < 1) fail("--spec-draft-n-max must be at least 1, got " + std::to_string(n_max));
    if (n_min < 0 || n_min > n_max)
      fail("--spec-draft-n-min must be in [0, --spec-draft-n-max = " + std::to_string(n_max) + "], got " +
           std::to_string(n_min));
    if (!(p_min >= 0.0f && p_min <= 1.0f)) fail("--spec-draft-p-min must be in [0, 1], got " + std::to_string(p_min));
  }
  if (has(SpecType::NGRAM_SIMPLE) && (ngram_size_n < 1 || ngram_size_m < 1))
    fail("--spec-ngram-simple-size-n and -size-m must be at least 1");
  if (has(SpecType::NGRAM_CACHE) && lookup_cache_static.empty() && lookup_cache_dynamic.empty())
    fail("--spec-type ngram-cache needs a lookup cache: -lcs/--lookup-cache-static or -lcd/--lookup-cache-dynamic");
  if (max_draft() > n_batch - 1)
    fail("a draft of " + std::to_string(max_draft()) + " tokens does not fit one verification batch of " +
         std::to_string(n_batch) + " tokens (the last sampled token and the draft)");
  synth_probs();  // throws for bad synthetic rates
}

std::vector<double> SpecParams::synth_probs() const {
  const bool has_len = synth_len != -1.0, has_rates = !synth_rates.empty();
  if (!has_len && !has_rates) return {};
  if (has_len && has_rates) throw Error("--spec-synth-len and --spec-synth-rates are mutually exclusive");
  const int n = max_draft();
  std::vector<double> rates = synth_rates;
  if (has_rates) {
    if (int(rates.size()) != n)
      throw Error("--spec-synth-rates must give " + std::to_string(n) + " values (one per draft position), got " +
                  std::to_string(rates.size()));
    for (size_t i = 0; i < rates.size(); i++) {
      if (!std::isfinite(rates[i]) || rates[i] < 0.0 || rates[i] > 1.0)
        throw Error("--spec-synth-rates must be within [0, 1]");
      if (i > 0 && rates[i] > rates[i - 1]) throw Error("--spec-synth-rates must not increase");
    }
  } else {
    // A constant conditional rate p whose mean accepted length 1 + p + p^2 + ... + p^n is synth_len.
    if (!std::isfinite(synth_len) || synth_len < 1.0 || synth_len > n + 1.0)
      throw Error("--spec-synth-len must be within [1, " + std::to_string(n + 1) + "]");
    double p = synth_len == n + 1.0 ? 1.0 : 0.0;
    if (synth_len > 1.0 && synth_len < n + 1.0) {
      double lo = 0.0, hi = 1.0;
      for (int it = 0; it < 48; it++) {
        const double mid = 0.5 * (lo + hi);
        double sum = 0.0, term = mid;
        for (int j = 0; j < n; j++) sum += term, term *= mid;
        (sum < synth_len - 1.0 ? lo : hi) = mid;
      }
      p = 0.5 * (lo + hi);
    }
    double r = p;
    for (int i = 0; i < n; i++) rates.push_back(r), r *= p;
  }
  // Conditional: the chance position i is accepted when position i - 1 was.
  std::vector<double> probs;
  double prev = 1.0;
  for (double r : rates) {
    probs.push_back(prev > 0.0 ? r / prev : 0.0);
    prev = r;
  }
  return probs;
}

}  // namespace hart::spec
