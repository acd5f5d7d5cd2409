// How much memory this process can still get, so that a model or a context too big for the
// machine fails up front with an error that names the sizes, instead of an allocation that
// overcommit grants and the OOM killer later ends (or a bare "out of memory").
#pragma once

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "common/error.h"

namespace hart {

// MemAvailable (free memory plus what the kernel can reclaim), lowered to what the address-space
// limit (RLIMIT_AS) leaves; SIZE_MAX when neither is known.
inline size_t available_memory_bytes() {
  size_t avail = SIZE_MAX;
  if (FILE* f = std::fopen("/proc/meminfo", "r")) {
    char line[256];
    unsigned long long kib;
    while (std::fgets(line, sizeof line, f)) {
      if (std::sscanf(line, "MemAvailable: %llu kB", &kib) == 1) avail = size_t(kib) << 10;
    }
    std::fclose(f);
  }
  struct rlimit as;
  if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    size_t mapped = 0;  // the process's current virtual size, which the limit counts
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
      unsigned long long pages;
      if (std::fscanf(f, "%llu", &pages) == 1) mapped = size_t(pages) * size_t(::sysconf(_SC_PAGESIZE));
      std::fclose(f);
    }
    avail = std::min(avail, as.rlim_cur > mapped ? size_t(as.rlim_cur - mapped) : size_t(0));
  }
  return avail;
}

// Throws hart::Error("<what> needs N MiB but only M MiB of memory is available") when `bytes`
// exceed available_memory_bytes().
inline void require_memory(size_t bytes, const std::string& what) {
  const size_t avail = available_memory_bytes();
  if (bytes <= avail) return;
  throw Error(what + " needs " + std::to_string(bytes >> 20) + " MiB but only " + std::to_string(avail >> 20) +
              " MiB of memory is available");
}

}  // namespace hart
