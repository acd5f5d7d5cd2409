// A device address or value as the ET backend's messages write it: 0x and lowercase hex digits.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace hart::et {

inline std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace hart::et
