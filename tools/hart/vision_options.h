// --mmproj and --image (llama-mtmd-cli's names): a multimodal projector beside the text model,
// and the images a prompt shows it.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "model_options.h"
#include "vision/clip_model.h"
#include "vision/encoder.h"
#include "vision/image.h"

namespace hart::cli {

struct VisionOptions {
  std::string mmproj;
  std::vector<std::string> images;

  void add_to(CLI::App& app, bool with_images);
  // Before the text model loads: --image without --mmproj is an error.
  void check() const;
};

// The projector, checked against the text model, and its encoder on the command's backends.
struct Vision {
  std::unique_ptr<vision::ClipModel> clip;
  std::unique_ptr<vision::Encoder> encoder;
  explicit operator bool() const { return clip != nullptr; }
};
Vision load_vision(const VisionOptions& opt, const ModelOptions& mo, const LoadedModel& lm);

// The prompt with one media marker per image in front when it holds none (llama-mtmd-cli's rule).
std::string with_markers(const std::string& prompt, size_t n_images);

}  // namespace hart::cli
