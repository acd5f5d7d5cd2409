// Where the sequences of a command or a server get their drafters: the lookup caches are loaded
// once and shared, a draft model's sessions are reused from one sequence to the next
// (DraftSessions), and each sequence gets a Speculator of its own, with its own settings (a
// server request's speculative.* fields) within what the factory was given.
#pragma once

#include <memory>

#include "spec/draft_model.h"
#include "spec/ngram_cache.h"
#include "spec/speculative.h"

namespace hart::spec {

class SpecFactory {
 public:
  // `params`: the command's or server's settings (validated); `draft`: for draft-simple; `mtp`:
  // for draft-mtp, sessions of the target's MTP block (model/mtp_model.h, with
  // SessionParams::keep_hidden).
  SpecFactory(const SpecParams& params, int n_vocab, std::unique_ptr<DraftSessions> draft = nullptr,
              std::unique_ptr<DraftSessions> mtp = nullptr);
  const SpecParams& params() const { return params_; }
  // Whether it can draft that way: ngram-simple always, ngram-cache with a lookup cache,
  // draft-simple with a draft model, draft-mtp with the MTP block's sessions.
  bool can(SpecType t) const;
  // A Speculator with `p`'s types and lengths (SpecParams::validate'd by the caller; a type this
  // factory cannot make is a hart::Error) for a target sampling with `sampling`.
  std::unique_ptr<Speculator> make(const SpecParams& p, const SamplerParams& sampling) const;
  // The lookup caches (nullptr without ngram-cache): the dynamic one is the caller's to update.
  LookupCaches* caches() const { return caches_.get(); }

 private:
  SpecParams params_;
  int n_vocab_;
  std::shared_ptr<LookupCaches> caches_;
  std::unique_ptr<DraftSessions> draft_;
  std::unique_ptr<DraftSessions> mtp_;
};

}  // namespace hart::spec
