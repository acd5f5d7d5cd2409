// Opening a model file for generation, the one way the CLI, the server and the C API do it: the
// GGUF (or a synthetic model), its vocabulary, its weights bound and checked, and the vocabulary
// checked against the embedding.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "gguf/gguf.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace hart {

struct LoadedModel {
  std::unique_ptr<Model> model;
  std::unique_ptr<Tokenizer> tokenizer;
  bool synthetic = false;
};

// `path`: a GGUF file, or synthetic:NAME:TYPE (random weights with a real model's shapes).
// mmap: map the weights instead of reading them. progress (may be empty): bytes read of all.
// Throws hart::Error naming what is wrong with the file.
LoadedModel open_model(const std::string& path, bool mmap, const std::function<void(size_t, size_t)>& progress = {});
// The same for a GGUF already open (the CLI's built-in model, parsed in place from its bytes).
LoadedModel open_model(std::unique_ptr<gguf::File> file);

inline bool is_synthetic_name(const std::string& path) { return path.rfind("synthetic:", 0) == 0; }

}  // namespace hart
