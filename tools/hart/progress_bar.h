// A one-line progress bar on stderr, redrawn in place when stderr is a terminal; elsewhere
// (logs, CI) only the finished line is printed.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <string>

namespace hart::cli {

inline std::string progress_bar(int percent) {
  constexpr int kWidth = 20;
  const int filled = percent * kWidth / 100;
  return "[" + std::string(size_t(filled), '#') + std::string(size_t(kWidth - filled), '.') + "]";
}

inline bool stderr_is_tty() {
  static const bool tty = ::isatty(2);
  return tty;
}

// "label [#####...]  42%": draws it when it changes; ends the line at 100%.
class ProgressLine {
 public:
  explicit ProgressLine(std::string label) : label_(std::move(label)) {}
  void update(size_t done, size_t total) {
    const int percent = total ? int(100 * done / total) : 100;
    if (percent == last_ || (!stderr_is_tty() && percent < 100)) return;
    last_ = percent;
    std::fprintf(stderr, "\r%s %s %3d%%%s", label_.c_str(), progress_bar(percent).c_str(), percent,
                 percent == 100 ? "\n" : "");
    std::fflush(stderr);
  }

 private:
  std::string label_;
  int last_ = -1;
};

}  // namespace hart::cli
