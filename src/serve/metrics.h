// Server metrics in Prometheus text format: request and token counters, TTFT and inter-token
// latency histograms, KV pool usage and the prefix cache's hit rate, speculative decoding's drafts
// (llama-server's spec_decode_* counters, with hart's prefix). Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace hart::serve {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double x);
  // "<name>_bucket{le=...} n" lines, _sum and _count.
  void write(std::string& out, const std::string& name) const;

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // per bucket (not cumulative); the last is +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

struct KvUsage {
  int64_t size = 0, used = 0, cached = 0;  // slots: pool, not free, owned by the prefix cache
  int64_t window_size = 0, window_used = 0;  // sliding-window layers' pool (0: no such layers)
  int64_t running = 0, waiting = 0;
};

class Metrics {
 public:
  Metrics();
  void request_finished(const std::string& reason);
  void request_rejected(int status);
  void prompt(int n_tokens, int n_cached);
  void first_token(double seconds);
  void next_token(double seconds);
  // A speculative verification step: n_drafted tokens checked, n_accepted of them kept.
  void draft(int64_t n_drafted, int64_t n_accepted);
  void set_kv(const KvUsage& u);
  std::string prometheus() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, uint64_t> finished_;  // by finish reason
  std::map<int, uint64_t> rejected_;          // by HTTP status
  uint64_t prompt_tokens_ = 0, cached_tokens_ = 0, generated_tokens_ = 0;
  uint64_t draft_tokens_ = 0, draft_accepted_ = 0, drafts_ = 0;
  Histogram ttft_, itl_;
  KvUsage kv_;
};

}  // namespace hart::serve
