#include "serve/metrics.h"

#include <fmt/format.h>

#include <algorithm>

namespace hart::serve {

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double x) {
  counts_[size_t(std::lower_bound(bounds_.begin(), bounds_.end(), x) - bounds_.begin())]++;
  sum_ += x;
  count_++;
}

void Histogram::write(std::string& out, const std::string& name) const {
  out += fmt::format("# TYPE {} histogram\n", name);
  uint64_t cum = 0;
  for (size_t i = 0; i < bounds_.size(); i++) {
    cum += counts_[i];
    out += fmt::format("{}_bucket{{le=\"{}\"}} {}\n", name, bounds_[i], cum);
  }
  out += fmt::format("{}_bucket{{le=\"+Inf\"}} {}\n{}_sum {}\n{}_count {}\n", name, count_, name, sum_, name, count_);
}

Metrics::Metrics()
    : ttft_({0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}),
      itl_({0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1}) {}

void Metrics::request_finished(const std::string& reason) {
  std::lock_guard lock(mutex_);
  finished_[reason]++;
}

void Metrics::request_rejected(int status) {
  std::lock_guard lock(mutex_);
  rejected_[status]++;
}

void Metrics::prompt(int n_tokens, int n_cached) {
  std::lock_guard lock(mutex_);
  prompt_tokens_ += uint64_t(n_tokens);
  cached_tokens_ += uint64_t(n_cached);
}

void Metrics::first_token(double seconds) {
  std::lock_guard lock(mutex_);
  generated_tokens_++;
  ttft_.observe(seconds);
}

void Metrics::next_token(double seconds) {
  std::lock_guard lock(mutex_);
  generated_tokens_++;
  itl_.observe(seconds);
}

void Metrics::draft(int64_t n_drafted, int64_t n_accepted) {
  std::lock_guard lock(mutex_);
  draft_tokens_ += uint64_t(n_drafted);
  draft_accepted_ += uint64_t(n_accepted);
  drafts_++;
}

void Metrics::set_kv(const KvUsage& u) {
  std::lock_guard lock(mutex_);
  kv_ = u;
}

std::string Metrics::prometheus() const {
  std::lock_guard lock(mutex_);
  std::string out = "# TYPE hart_requests_total counter\n";
  for (const auto& [reason, n] : finished_) out += fmt::format("hart_requests_total{{finish_reason=\"{}\"}} {}\n", reason, n);
  out += "# TYPE hart_requests_rejected_total counter\n";
  for (const auto& [status, n] : rejected_) out += fmt::format("hart_requests_rejected_total{{status=\"{}\"}} {}\n", status, n);
  out += fmt::format(
      "# TYPE hart_prompt_tokens_total counter\nhart_prompt_tokens_total {}\n"
      "# TYPE hart_prompt_tokens_cached_total counter\nhart_prompt_tokens_cached_total {}\n"
      "# TYPE hart_generation_tokens_total counter\nhart_generation_tokens_total {}\n"
      "# TYPE hart_prefix_cache_hit_rate gauge\nhart_prefix_cache_hit_rate {}\n",
      prompt_tokens_, cached_tokens_, generated_tokens_,
      prompt_tokens_ ? double(cached_tokens_) / double(prompt_tokens_) : 0.0);
  out += fmt::format(
      "# TYPE hart_spec_decode_num_draft_tokens_total counter\nhart_spec_decode_num_draft_tokens_total {}\n"
      "# TYPE hart_spec_decode_num_accepted_tokens_total counter\nhart_spec_decode_num_accepted_tokens_total {}\n"
      "# TYPE hart_spec_decode_num_drafts_total counter\nhart_spec_decode_num_drafts_total {}\n",
      draft_tokens_, draft_accepted_, drafts_);
  ttft_.write(out, "hart_time_to_first_token_seconds");
  itl_.write(out, "hart_inter_token_latency_seconds");
  out += fmt::format(
      "# TYPE hart_kv_slots gauge\nhart_kv_slots {}\n# TYPE hart_kv_slots_used gauge\nhart_kv_slots_used {}\n"
      "# TYPE hart_kv_slots_cached gauge\nhart_kv_slots_cached {}\n# TYPE hart_kv_usage_ratio gauge\nhart_kv_usage_ratio {}\n"
      "# TYPE hart_requests_running gauge\nhart_requests_running {}\n"
      "# TYPE hart_requests_waiting gauge\nhart_requests_waiting {}\n",
      kv_.size, kv_.used, kv_.cached, kv_.size ? double(kv_.used) / double(kv_.size) : 0.0, kv_.running, kv_.waiting);
  if (kv_.window_size > 0)
    out += fmt::format(
        "# TYPE hart_kv_window_slots gauge\nhart_kv_window_slots {}\n"
        "# TYPE hart_kv_window_slots_used gauge\nhart_kv_window_slots_used {}\n",
        kv_.window_size, kv_.window_used);
  return out;
}

}  // namespace hart::serve
