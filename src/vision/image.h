// Images as the projectors take them: 8-bit RGB, decoded from JPEG, PNG or BMP bytes (Debian's
// stb_image, as llama.cpp's mtmd-helper decodes them: alpha dropped, grey expanded to RGB), and
// WebP (Debian's libwebp, which llama.cpp does not read; alpha dropped the same way).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace hart::vision {

// Interleaved RGB, row-major: pixel (x, y) channel c at rgb[3 * (y * width + x) + c].
struct RgbImage {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;
};

// The largest image decoded, in pixels: a small compressed file can claim a huge size (a
// decompression bomb), so the size in its header is checked before any pixel is decoded.
// 8192 x 8192 is 192 MiB of RGB, far beyond what any projector's preprocessing keeps.
constexpr int64_t kMaxImagePixels = int64_t(8192) * 8192;

// Throws hart::Error with the reason (not an image of a supported format, corrupt, too large).
RgbImage decode_image(std::span<const uint8_t> bytes, int64_t max_pixels = kMaxImagePixels);
// Reads and decodes a file; errors name it.
RgbImage load_image(const std::string& path, int64_t max_pixels = kMaxImagePixels);

}  // namespace hart::vision
