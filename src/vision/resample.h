// Resizing and cropping 8-bit RGB images as llama.cpp's mtmd does (img_tool in mtmd-image.cpp),
// which follows Pillow's Image.resize: a separable filter (horizontal pass, then vertical),
// its support widened by the scale when shrinking, weights normalized and rounded to 22-bit
// fixed point, each pass rounded and clamped to 8 bits.
#pragma once

#include "vision/image.h"

namespace hart::vision {

enum class ResizeFilter { BILINEAR, BICUBIC, LANCZOS };

// Resized to width x height (each 1..65536); a same-size resize is a copy.
RgbImage resize(const RgbImage& src, int width, int height, ResizeFilter filter);
// The w x h rectangle whose top-left pixel is (x, y); it must lie inside src.
RgbImage crop(const RgbImage& src, int x, int y, int w, int h);

}  // namespace hart::vision
