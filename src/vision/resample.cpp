#include "vision/resample.h"

#include <cmath>
#include <cstring>
#include <string>

#include "common/error.h"

namespace hart::vision {
namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;  // weights in 22-bit fixed point: 8-bit pixels, 2 bits headroom

double filter_support(ResizeFilter f) {
  switch (f) {
    case ResizeFilter::BILINEAR: return 1.0;
    case ResizeFilter::BICUBIC: return 2.0;
    case ResizeFilter::LANCZOS: return 3.0;
  }
  return 1.0;
}

double sinc(double x) {
  if (x == 0.0) return 1.0;
  const double px = x * 3.141592653589793238462643383279502884;
  return std::sin(px) / px;
}

double filter_weight(ResizeFilter f, double x) {
  switch (f) {
    case ResizeFilter::LANCZOS: return -3.0 <= x && x < 3.0 ? sinc(x) * sinc(x / 3.0) : 0.0;
    case ResizeFilter::BILINEAR: x = std::fabs(x); return x < 1.0 ? 1.0 - x : 0.0;
    case ResizeFilter::BICUBIC: {
      constexpr double a = -0.5;  // Pillow's (PyTorch and ggml use -0.75)
      x = std::fabs(x);
      if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
      if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
      return 0.0;
    }
  }
  return 0.0;
}

// For each output pixel of one dimension: the first input pixel it reads, how many, and their
// fixed-point weights (ksize per output pixel).
struct Coefficients {
  int ksize = 0;
  std::vector<int> first, count;
  std::vector<int32_t> weights;
};

Coefficients coefficients(int in_size, int out_size, ResizeFilter f) {
  const double scale = double(in_size) / out_size;
  const double filterscale = scale < 1.0 ? 1.0 : scale;  // shrinking widens the filter
  const double support = filter_support(f) * filterscale;
  Coefficients c;
  c.ksize = int(std::ceil(support)) * 2 + 1;
  c.first.resize(size_t(out_size));
  c.count.resize(size_t(out_size));
  c.weights.assign(size_t(out_size) * size_t(c.ksize), 0);
  std::vector<double> w(size_t(c.ksize));
  const double fxp = std::ldexp(1.0, kPrecisionBits);
  for (int o = 0; o < out_size; o++) {
    const double center = (o + 0.5) * scale;
    const int lo = std::max(0, int(center - support + 0.5));
    const int hi = std::min(in_size, int(center + support + 0.5));
    double sum = 0.0;
    for (int i = 0; i < hi - lo; i++) sum += w[size_t(i)] = filter_weight(f, (i + lo - center + 0.5) / filterscale);
    for (int i = 0; i < hi - lo; i++) {
      const double v = sum != 0.0 ? w[size_t(i)] / sum : w[size_t(i)];
      // Pillow adds +-0.5 and truncates toward zero.
      c.weights[size_t(o) * size_t(c.ksize) + size_t(i)] = int32_t(v * fxp + (v < 0 ? -0.5 : 0.5));
    }
    c.first[size_t(o)] = lo;
    c.count[size_t(o)] = hi - lo;
  }
  return c;
}

uint8_t clip8(int32_t v) { return uint8_t(v < 0 ? 0 : v > 255 ? 255 : v); }

// One pass over `lines` lines: output element (o, l, channel) = sum over k of
// in(first[o] + k, l, channel) * weight, where `along` and `across` are the element strides
// (in bytes of RGB) along the resized dimension and between lines.
void resample_pass(const uint8_t* in, size_t in_along, size_t in_across, uint8_t* out, size_t out_along,
                   size_t out_across, int lines, const Coefficients& c) {
  const int n_out = int(c.first.size());
  for (int l = 0; l < lines; l++) {
    for (int o = 0; o < n_out; o++) {
      const int32_t* k = &c.weights[size_t(o) * size_t(c.ksize)];
      const uint8_t* p = in + size_t(l) * in_across + size_t(c.first[size_t(o)]) * in_along;
      int32_t acc[3] = {1 << (kPrecisionBits - 1), 1 << (kPrecisionBits - 1), 1 << (kPrecisionBits - 1)};
      for (int i = 0; i < c.count[size_t(o)]; i++, p += in_along)
        for (int ch = 0; ch < 3; ch++) acc[ch] += int32_t(p[ch]) * k[i];
      uint8_t* d = out + size_t(l) * out_across + size_t(o) * out_along;
      for (int ch = 0; ch < 3; ch++) d[ch] = clip8(acc[ch] >> kPrecisionBits);
    }
  }
}

}  // namespace

RgbImage resize(const RgbImage& src, int width, int height, ResizeFilter filter) {
  if (width <= 0 || width > 65536 || height <= 0 || height > 65536)
    throw Error("image: resize target " + std::to_string(width) + " x " + std::to_string(height) + " is out of range");
  RgbImage cur = src;
  if (width != cur.width) {  // horizontal pass: along x within each row
    RgbImage out{width, cur.height, std::vector<uint8_t>(size_t(width) * size_t(cur.height) * 3)};
    resample_pass(cur.rgb.data(), 3, size_t(cur.width) * 3, out.rgb.data(), 3, size_t(width) * 3, cur.height,
                  coefficients(cur.width, width, filter));
    cur = std::move(out);
  }
  if (height != cur.height) {  // vertical pass: along y within each column
    RgbImage out{cur.width, height, std::vector<uint8_t>(size_t(cur.width) * size_t(height) * 3)};
    resample_pass(cur.rgb.data(), size_t(cur.width) * 3, 3, out.rgb.data(), size_t(cur.width) * 3, 3, cur.width,
                  coefficients(cur.height, height, filter));
    cur = std::move(out);
  }
  return cur;
}

RgbImage crop(const RgbImage& src, int x, int y, int w, int h) {
  if (x < 0 || y < 0 || w <= 0 || h <= 0 || x + w > src.width || y + h > src.height)
    throw Error("image: crop " + std::to_string(w) + " x " + std::to_string(h) + " at (" + std::to_string(x) + ", " +
                std::to_string(y) + ") is outside the " + std::to_string(src.width) + " x " +
                std::to_string(src.height) + " image");
  RgbImage out{w, h, std::vector<uint8_t>(size_t(w) * size_t(h) * 3)};
  for (int r = 0; r < h; r++)
    std::memcpy(&out.rgb[size_t(r) * size_t(w) * 3], &src.rgb[(size_t(y + r) * size_t(src.width) + size_t(x)) * 3],
                size_t(w) * 3);
  return out;
}

}  // namespace hart::vision
