// Writes the vision test files (fixtures.h) into a folder, for llama.cpp to compute its golden on.
//   vision_fixtures STORIES260K.gguf OUT_DIR [--f16]   (--f16: the projector's matrices in F16)
#include <cstdio>
#include <exception>
#include <string>

#include "vision/fixtures.h"

int main(int argc, char** argv) {
  const bool f16 = argc == 4 && std::string(argv[3]) == "--f16";
  if (argc != 3 && !f16) {
    std::fprintf(stderr, "usage: vision_fixtures STORIES260K.gguf OUT_DIR [--f16]\n");
    return 2;
  }
  try {
    const std::string dir = argv[2];
    hart::vision::fixtures::write_text_model(argv[1], dir + "/text.gguf");
    hart::vision::fixtures::write_mmproj(dir + "/mmproj.gguf", {.f16_matrices = f16});
    hart::vision::fixtures::write_png(dir + "/image.png");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vision_fixtures: %s\n", e.what());
    return 1;
  }
  return 0;
}
