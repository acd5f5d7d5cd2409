#include "vision_options.h"

#include <cstdio>

#include "common/error.h"
#include "vision/image_prompt.h"
#include "vision/multimodal.h"

namespace hart::cli {

void VisionOptions::add_to(CLI::App& app, bool with_images) {
  app.add_option("--mmproj", mmproj, "multimodal projector file (llama.cpp's mmproj GGUF) for the model's images");
  if (with_images)
    app.add_option("--image", images,
                   "an image (JPEG, PNG, BMP) the prompt shows; repeat for several, each at a <__media__> marker "
                   "(none in the prompt: all of them before it)");
}

void VisionOptions::check() const {
  if (!images.empty() && mmproj.empty())
    throw Error("--image needs --mmproj: a text model alone takes no image");
}

Vision load_vision(const VisionOptions& opt, const ModelOptions& mo, const LoadedModel& lm) {
  Vision v;
  if (opt.mmproj.empty()) return v;
  v.clip = vision::ClipModel::open(opt.mmproj);
  vision::check_pair(*v.clip, *lm.model);
  v.encoder = std::make_unique<vision::Encoder>(*v.clip, mo.backends());
  return v;
}

std::string with_markers(const std::string& prompt, size_t n_images) {
  if (prompt.find(vision::kMediaMarker) != std::string::npos) return prompt;
  std::string out;
  for (size_t i = 0; i < n_images; i++) out += vision::kMediaMarker;
  return out + prompt;
}

}  // namespace hart::cli
