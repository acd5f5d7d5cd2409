// Streaming generated text to stdout as it becomes final.
#pragma once

#include <cstdio>
#include <string>

namespace hart::cli {

inline void print(const std::string& text) {
  if (text.empty()) return;
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

}  // namespace hart::cli
