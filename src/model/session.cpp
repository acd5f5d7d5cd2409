#include "model/session.h"

#include <algorithm>
#include <string>

#include "common/error.h"
#include "model/forward.h"

namespace hart {

int default_n_ctx(const HParams& hp) { return std::min(hp.n_ctx_train, 4096); }

Session::Session(const Model& model, const SessionParams& params)
    : model_(model),
      cache_(model.hp, params.n_ctx > 0 ? params.n_ctx : default_n_ctx(model.hp), params.cache_type),
      executor_(params) {}

Session::~Session() = default;

std::span<const float> Session::decode(std::span<const int32_t> tokens, bool all_logits) {
  const int n = int(tokens.size());
  if (n == 0) throw Error("decode called with no tokens");
  if (n_past_ + n > cache_.n_ctx())
    throw Error("context is full: " + std::to_string(n_past_) + " + " + std::to_string(n) +
                " tokens exceed the context size " + std::to_string(cache_.n_ctx()) +
                " (raise it with --ctx-size)");
  for (int32_t t : tokens)
    if (t < 0 || t >= model_.hp.n_vocab)
      throw Error("token id " + std::to_string(t) + " is outside the vocabulary");

  ForwardGraph fg;
  build_forward(fg, model_, cache_, tokens, n_past_, all_logits);
  executor_.run(fg.graph);
  n_past_ += n;
  return {static_cast<const float*>(fg.logits->data), size_t(fg.logits->nelements())};
}

void Session::truncate(int n) { n_past_ = std::clamp(n, 0, n_past_); }

}  // namespace hart
