// The model the commands run when no -m is given: karpathy's TinyStories stories260K
// (models/stories260K.gguf, MIT, 1.2 MB), embedded in the binary so that a fresh checkout prints
// real text without a download or the shared test data.
#pragma once

#include <cstdint>
#include <span>

namespace hart::cli {

constexpr const char* kBuiltinModelName = "stories260K";

// The GGUF file's bytes, 64-byte aligned, for gguf::File::from_memory.
std::span<const uint8_t> builtin_model_bytes();

}  // namespace hart::cli
