// Internal: the IQ types' quantizers (ggml's algorithms), for iq_codec.cpp's codecs.
#pragma once

#include <cstdint>

namespace hart::quant {

using QuantizeFn = void (*)(const float* src, void* dst, int64_t n);

}  // namespace hart::quant
