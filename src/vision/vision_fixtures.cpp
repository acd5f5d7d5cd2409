// Writes the vision test files (fixtures.h) into a folder, for llama.cpp to compute its golden on.
//   vision_fixtures STORIES260K.gguf OUT_DIR
#include <cstdio>
#include <exception>
#include <string>

#include "vision/fixtures.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: vision_fixtures STORIES260K.gguf OUT_DIR\n");
    return 2;
  }
  try {
    const std::string dir = argv[2];
    hart::vision::fixtures::write_text_model(argv[1], dir + "/text.gguf");
    hart::vision::fixtures::write_mmproj(dir + "/mmproj.gguf");
    hart::vision::fixtures::write_png(dir + "/image.png");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vision_fixtures: %s\n", e.what());
    return 1;
  }
  return 0;
}
