// Test files for the vision path, made the same way every time (a fixed seed, no clock), so
// llama.cpp's outputs on them can be recorded once (tools/llamacpp-golden/make-vision) and
// compared with hart's in tests:
//  - a tiny random Idefics3 projector (SigLIP ViT: 16 x 16 tiles of 4 x 4 patches, 32 wide,
//    2 layers, scale factor 2, longest edge 32) whose output is `n_embd_out` wide;
//  - a text model: stories260K (trained llama, 64 wide) with the tokens Idefics3's layout needs
//    appended to its vocabulary (control tokens, their embedding rows random);
//  - a 40 x 27 PNG (a colour pattern): 2 x 2 slices and the overview.
#pragma once

#include <string>

namespace hart::vision::fixtures {

struct MmprojShape {
  int n_embd_out = 64;
  bool f16_matrices = false;  // store the matrices (and the patch kernel) as F16, as converters do
};
void write_mmproj(const std::string& path, const MmprojShape& shape = {});
// From stories260K.gguf (`base`).
void write_text_model(const std::string& base, const std::string& path);
void write_png(const std::string& path, int width = 40, int height = 27);

}  // namespace hart::vision::fixtures
