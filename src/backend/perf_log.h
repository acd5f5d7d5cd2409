// A line-oriented performance log shared by the scheduler and the backends (--perf-log FILE):
// each writer appends whole lines ("ET_PERF|op=...", "SCHED_SPLIT|backend=CPU|..."), so one
// file shows every kernel launch and every part that ran elsewhere.
#pragma once

#include <cstdio>
#include <mutex>
#include <string>

namespace hart {

class PerfLog {
 public:
  // Truncates path; throws hart::Error when it cannot be opened.
  explicit PerfLog(const std::string& path);
  ~PerfLog();
  PerfLog(const PerfLog&) = delete;
  PerfLog& operator=(const PerfLog&) = delete;

  void line(const std::string& text);  // appends text + '\n' and flushes

 private:
  std::FILE* file_ = nullptr;
  std::mutex mutex_;
};

}  // namespace hart
