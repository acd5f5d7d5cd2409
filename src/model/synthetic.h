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

// spec is "NAME" or "NAME:TYPE" (TYPE as `hart quantize` takes it; default q8_0).
// Throws hart::Error for an unknown name or type.
std::unique_ptr<gguf::File> make_synthetic_model(std::string_view spec);
void write_synthetic_model(std::string_view spec, const std::string& path);

}  // namespace hart
