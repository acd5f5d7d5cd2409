#include "spec/spec_factory.h"

#include "common/error.h"
#include "spec/mtp_drafter.h"
#include "spec/ngram_simple.h"

namespace hart::spec {

SpecFactory::SpecFactory(const SpecParams& params, int n_vocab, std::unique_ptr<DraftSessions> draft,
                         std::unique_ptr<DraftSessions> mtp)
    : params_(params), n_vocab_(n_vocab), draft_(std::move(draft)), mtp_(std::move(mtp)) {
  if (params.has(SpecType::NGRAM_CACHE))
    caches_ = LookupCaches::load(params.lookup_cache_static, params.lookup_cache_dynamic, n_vocab);
}

bool SpecFactory::can(SpecType t) const {
  switch (t) {
    case SpecType::NGRAM_SIMPLE: return true;
    case SpecType::NGRAM_CACHE: return caches_ != nullptr;
    case SpecType::DRAFT_SIMPLE: return draft_ != nullptr;
    case SpecType::DRAFT_MTP: return mtp_ != nullptr;
    case SpecType::NONE: return true;
  }
  return false;
}

std::unique_ptr<Speculator> SpecFactory::make(const SpecParams& p, const SamplerParams& sampling) const {
  std::vector<std::unique_ptr<Drafter>> drafters;
  for (SpecType t : p.types) {
    if (!can(t))
      throw Error(std::string("speculative type ") + type_name(t) + " needs " +
                  (t == SpecType::DRAFT_SIMPLE ? "a draft model (-md)"
                   : t == SpecType::DRAFT_MTP  ? "a model with multi-token-prediction layers"
                                               : "a lookup cache (-lcs/-lcd)"));
    switch (t) {
      case SpecType::NGRAM_SIMPLE:
        drafters.push_back(std::make_unique<NgramSimpleDrafter>(p.ngram_size_n, p.ngram_size_m));
        break;
      case SpecType::NGRAM_CACHE: drafters.push_back(std::make_unique<NgramCacheDrafter>(caches_)); break;
      case SpecType::DRAFT_SIMPLE:
        drafters.push_back(std::make_unique<DraftModelDrafter>(*draft_, sampling, n_vocab_, p.p_min, p.n_min));
        break;
      case SpecType::DRAFT_MTP: drafters.push_back(std::make_unique<MtpDrafter>(*mtp_, p.p_min, p.n_min)); break;
      case SpecType::NONE: break;
    }
  }
  return std::make_unique<Speculator>(p, std::move(drafters));
}

}  // namespace hart::spec
