// ggml's IQ grids (iq_grids.cpp): the patterns an IQ type's grid index picks. An IQ2 / IQ1 entry
// holds 8 weights, an IQ3 entry 4, one byte each, weight 0 in the lowest byte.
#pragma once

#include <cstdint>

namespace hart::quant {

extern const uint64_t kIq2xxsGrid[256];  // magnitudes 8, 25, 43
extern const uint64_t kIq2xsGrid[512];
extern const uint64_t kIq2sGrid[1024];
extern const uint32_t kIq3xxsGrid[256];  // magnitudes 4, 12, ..., 62
extern const uint32_t kIq3sGrid[512];
extern const uint64_t kIq1sGrid[2048];   // signed levels -1, 0, 1

}  // namespace hart::quant
