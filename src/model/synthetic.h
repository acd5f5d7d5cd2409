// Synthetic models: random weights in the exact shapes of real ones (SmolLM2, TinyLlama,
// Llama 3.2, Qwen2.5, Qwen3), built as real GGUF files so that any engine can load the same
// bytes. A small generated SentencePiece-style vocabulary (bytes + syllable words) stands in
// for the real one; the text they produce is gibberish by design.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/gguf.h"

namespace hart {

// Known shape names ("smollm2-135m", "tinyllama-1.1b", ...).
std::vector<std::string> synthetic_model_names();

// spec is "NAME" or "NAME:TYPE" (TYPE as `hart quantize` takes it; default q8_0). A plain type
// (q4_0, f16, ...) is used for every matrix whose rows fit its blocks (else F16); a mix (q4_k_m,
// q5_k_m) gives each tensor the type `hart quantize` would. Throws hart::Error for an unknown
// name or type.
std::unique_ptr<gguf::File> make_synthetic_model(std::string_view spec);
void write_synthetic_model(std::string_view spec, const std::string& path);
// The tensors those would hold (names, types, shapes; no data), without generating any weights.
std::vector<gguf::TensorInfo> synthetic_model_tensors(std::string_view spec);

}  // namespace hart
