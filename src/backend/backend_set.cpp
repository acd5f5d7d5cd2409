#include "backend/backend_set.h"

#include <algorithm>
#include <thread>

#include "backend/registry.h"
#include "common/error.h"

namespace hart {

BackendSet::BackendSet(const std::vector<std::string>& names, int n_threads, const std::string& perf_log,
                       uint64_t cpu_mask) {
  if (!perf_log.empty()) log_ = std::make_unique<PerfLog>(perf_log);
  const int threads = n_threads > 0 ? n_threads : int(std::max(1u, std::thread::hardware_concurrency()));
  const BackendOptions options{threads, cpu_mask, log_.get()};
  const BackendInfo* fallback = nullptr;
  for (const BackendInfo* b : registered_backends())
    if (b->runs_every_op) fallback = b;
  if (!fallback) throw Error("no registered backend runs every op (is the CPU backend linked?)");
  // The fallback runs whatever the others do not support: it is opened once and comes last.
  std::unique_ptr<Backend> last;
  for (const std::string& name : names) {
    const BackendInfo& b = find_backend(name);
    if (&b != fallback) owned_.push_back(b.open(options));
    else if (!last) last = b.open(options);
  }
  if (!last) last = fallback->open(options);
  owned_.push_back(std::move(last));
  for (const auto& b : owned_) order_.push_back(b.get());
}

BackendSet::BackendSet(BackendSet&&) noexcept = default;
BackendSet& BackendSet::operator=(BackendSet&&) noexcept = default;
BackendSet::~BackendSet() = default;

Backend* BackendSet::find(const std::string& backend_name) const {
  for (Backend* b : order_)
    if (b->name() == backend_name) return b;
  return nullptr;
}

}  // namespace hart
