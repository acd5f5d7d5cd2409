// Image decoding and a projector's preprocessing on arbitrary bytes: every input is either an
// image whose tiles come out whole, or a hart::Error. A crash, hang, sanitizer report or huge
// allocation is a bug (a header claiming a huge image must be refused before decoding).
#include <cstddef>
#include <cstdint>
#include <span>

#include "common/error.h"
#include "vision/image.h"
#include "vision/preprocess.h"

using namespace hart;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  vision::RgbImage img;
  try {
    img = vision::decode_image(std::span<const uint8_t>(data, size), /*max_pixels=*/int64_t(1) << 20);
  } catch (const Error&) {
    return 0;
  }
  if (img.width <= 0 || img.height <= 0 || img.rgb.size() != size_t(img.width) * size_t(img.height) * 3) __builtin_trap();
  vision::ClipHParams hp;  // Idefics3's tiling at a small scale: 16-pixel tiles, longest edge 48
  hp.image_size = 16;
  hp.patch_size = 4;
  hp.n_merge = 2;
  hp.longest_edge = 48;
  hp.mean = {0.5f, 0.5f, 0.5f};
  hp.std = {0.5f, 0.5f, 0.5f};
  const vision::ImageTiles t = vision::preprocess(hp, img);
  if (t.tiles.size() != size_t(t.grid_x) * size_t(t.grid_y) + 1) __builtin_trap();
  for (const vision::Tile& tile : t.tiles)
    if (tile.planar.size() != 16u * 16 * 3) __builtin_trap();
  return 0;
}
