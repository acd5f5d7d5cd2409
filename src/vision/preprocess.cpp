#include "vision/preprocess.h"

#include "vision/resample.h"

namespace hart::vision {
namespace {

RgbImage resized(const RgbImage& img, int w, int h) {
  return w == img.width && h == img.height ? img : resize(img, w, h, ResizeFilter::LANCZOS);
}

// Idefics3 (mtmd_image_preprocessor_idefics3, transformers' Idefics3ImageProcessor): the longer
// side to longest_edge keeping the aspect ratio (the other rounded down, then up to even), then
// each side up to whole tiles, cut into tiles; the overview is that refined image in one tile.
// Every resize is Lanczos.
ImageTiles idefics3(const ClipHParams& hp, const RgbImage& img) {
  const int tile = hp.image_size, edge = hp.longest_edge;
  const double aspect = double(img.width) / img.height;
  int w, h;
  if (img.width >= img.height) {
    w = edge;
    h = int(edge / aspect);
    h += h % 2;
  } else {
    h = edge;
    w = int(edge * aspect);
    w += w % 2;
  }
  w = std::max(w, 1);  // a sliver of an image (1 x 1000) still becomes one tile
  h = std::max(h, 1);
  ImageTiles out;
  out.grid_x = (w + tile - 1) / tile;
  out.grid_y = (h + tile - 1) / tile;
  const RgbImage refined = resized(resized(img, w, h), out.grid_x * tile, out.grid_y * tile);
  for (int y = 0; y < out.grid_y; y++)
    for (int x = 0; x < out.grid_x; x++) out.tiles.push_back(normalized_tile(hp, crop(refined, x * tile, y * tile, tile, tile)));
  out.tiles.push_back(normalized_tile(hp, resized(refined, tile, tile)));
  return out;
}

}  // namespace

Tile normalized_tile(const ClipHParams& hp, const RgbImage& img) {
  Tile t{img.width, img.height, std::vector<float>(size_t(img.width) * size_t(img.height) * 3)};
  const size_t plane = size_t(img.width) * size_t(img.height);
  for (size_t i = 0; i < plane; i++)
    for (size_t c = 0; c < 3; c++) t.planar[c * plane + i] = (float(img.rgb[3 * i + c]) / 255.0f - hp.mean[c]) / hp.std[c];
  return t;
}

ImageTiles preprocess(const ClipHParams& hp, const RgbImage& img) {
  switch (hp.projector) {
    case Projector::IDEFICS3: return idefics3(hp, img);
  }
  return {};
}

}  // namespace hart::vision
