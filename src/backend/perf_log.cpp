#include "backend/perf_log.h"

#include <cerrno>
#include <cstring>

#include "common/error.h"

namespace hart {

PerfLog::PerfLog(const std::string& path) : file_(std::fopen(path.c_str(), "w")) {
  if (!file_) throw Error("cannot open perf log " + path + ": " + std::strerror(errno));
}

PerfLog::~PerfLog() { std::fclose(file_); }

void PerfLog::line(const std::string& text) {
  std::lock_guard lock(mutex_);
  std::fputs(text.c_str(), file_);
  std::fputc('\n', file_);
  std::fflush(file_);
}

}  // namespace hart
