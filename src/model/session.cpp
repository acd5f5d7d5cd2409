#include "model/session.h"

#include <algorithm>
#include <string>
#include <thread>

#include "backend/cpu/cpu_backend.h"
#include "common/error.h"
#include "model/forward.h"
#include "sched/devices.h"

namespace hart {

namespace {

constexpr size_t kArenaAlign = 64;

uint8_t* align_up(uint8_t* p) {
  return reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(p) + kArenaAlign - 1) &
                                    ~uintptr_t(kArenaAlign - 1));
}

}  // namespace

int default_n_ctx(const HParams& hp) { return std::min(hp.n_ctx_train, 4096); }

Session::Session(const Model& model, const SessionParams& params)
    : model_(model),
      cache_(model.hp, params.n_ctx > 0 ? params.n_ctx : default_n_ctx(model.hp), params.cache_type) {
  const int n_threads = params.n_threads > 0 ? params.n_threads : int(std::max(1u, std::thread::hardware_concurrency()));
  const bool cpu_only = params.devices.empty() || (params.devices.size() == 1 && params.devices[0] == "cpu");
  if (cpu_only) backend_ = std::make_unique<cpu::CpuBackend>(n_threads);
  else devices_ = std::make_unique<sched::Devices>(params.devices, n_threads, params.perf_log);
}

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
  const size_t need = plan_memory(fg.graph, nullptr) + kArenaAlign;
  if (arena_size_ < need) {
    arena_.reset(new uint8_t[need]);
    arena_size_ = need;
  }
  plan_memory(fg.graph, align_up(arena_.get()));
  if (devices_) devices_->compute(fg.graph);
  else backend_->compute(fg.graph);
  n_past_ += n;
  return {static_cast<const float*>(fg.logits->data), size_t(fg.logits->nelements())};
}

void Session::truncate(int n) { n_past_ = std::clamp(n, 0, n_past_); }

}  // namespace hart
