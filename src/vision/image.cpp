#include "vision/image.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>

#include <stb_image.h>
#ifdef HART_WEBP
#include <webp/decode.h>
#endif

#include "common/error.h"
#include "vision/stb_image_limit.h"

namespace hart::vision {

namespace {

// Debian 12's stb_image builds a JPEG Huffman table without checking that its code counts sum to at
// most 256 (upstream checks since 2.28): a DHT segment whose counts sum past that writes past the
// table's arrays (found by fuzz_image). Such files are refused before stb reads them. Rather than
// follow stb's marker parsing, every FF C4 pair of a file stb takes for a JPEG (0xFF, any fill
// 0xFF bytes, D8) is read as a DHT segment: a superset of the segments stb can meet (a valid
// file has FF C4 only there, since its scan data stuffs every 0xFF).
bool jpeg_huffman_tables_fit(std::span<const uint8_t> b) {
  size_t soi = 0;
  while (soi < b.size() && b[soi] == 0xFF) soi++;
  if (soi == 0 || soi == b.size() || b[soi] != 0xD8) return true;  // not a JPEG to stb
  const auto at = [&](size_t k) -> size_t { return k < b.size() ? b[k] : 0; };  // stb reads 0 past the end
  for (size_t i = soi; i + 1 < b.size(); i++) {
    if (b[i] != 0xFF || b[i + 1] != 0xC4) continue;
    const size_t end = i + 2 + (at(i + 2) << 8 | at(i + 3));  // the length counts its own 2 bytes
    for (size_t t = i + 4; t < end && t < b.size();) {
      size_t n = 0;
      for (size_t k = 1; k <= 16; k++) n += at(t + k);
      if (n > 256) return false;
      t += 17 + n;
    }
  }
  return true;
}

void check_size(int64_t w, int64_t h, int64_t max_pixels) {
  if (w <= 0 || h <= 0) throw Error("image: its size is " + std::to_string(w) + " x " + std::to_string(h));
  if (w * h > max_pixels)
    throw Error("image: " + std::to_string(w) + " x " + std::to_string(h) + " pixels is more than the limit of " +
                std::to_string(max_pixels));
}

// A RIFF container of form type WEBP.
bool is_webp(std::span<const uint8_t> b) {
  return b.size() >= 12 && std::memcmp(b.data(), "RIFF", 4) == 0 && std::memcmp(b.data() + 8, "WEBP", 4) == 0;
}

// WebP through libwebp: the size from the header first (the pixel limit), then RGB, alpha dropped
// as stb_image drops it.
RgbImage decode_webp(std::span<const uint8_t> bytes, int64_t max_pixels) {
#ifdef HART_WEBP
  int w = 0, h = 0;
  if (!WebPGetInfo(bytes.data(), bytes.size(), &w, &h)) throw Error("image: a corrupt WebP image (its header does not parse)");
  check_size(w, h, max_pixels);
  std::unique_ptr<uint8_t, void (*)(void*)> px(WebPDecodeRGB(bytes.data(), bytes.size(), &w, &h), WebPFree);
  if (!px) throw Error("image: a corrupt WebP image (cannot decode it)");
  RgbImage img;
  img.width = w;
  img.height = h;
  img.rgb.assign(px.get(), px.get() + size_t(w) * size_t(h) * 3);
  return img;
#else
  (void)bytes;
  (void)max_pixels;
  throw Error("image: a WebP image, and this build of hart has no WebP decoder (built without libwebp-dev)");
#endif
}

}  // namespace

RgbImage decode_image(std::span<const uint8_t> bytes, int64_t max_pixels) {
  if (bytes.empty()) throw Error("image: the data is empty");
  if (is_webp(bytes)) return decode_webp(bytes, max_pixels);
  if (!jpeg_huffman_tables_fit(bytes)) throw Error("image: a corrupt JPEG (a Huffman table of more than 256 codes)");
  if (bytes.size() > size_t(INT_MAX)) throw Error("image: the data is larger than 2 GiB");
  const auto* p = reinterpret_cast<const stbi_uc*>(bytes.data());
  const int len = int(bytes.size());
  int w = 0, h = 0, channels = 0;
  if (!stbi_info_from_memory(p, len, &w, &h, &channels))
    throw Error(std::string("image: not a JPEG, PNG, BMP or WebP image, or corrupt (") + stbi_failure_reason() + ")");
  check_size(w, h, max_pixels);
  // What a decode of that many pixels needs at most in one buffer: PNG's inflated rows, 16 bits
  // for each of 4 channels plus a filter byte a row (JPEG's and BMP's buffers are smaller).
  struct AllocBound {
    explicit AllocBound(size_t bytes) { hart_stbi_set_max_alloc(bytes); }
    ~AllocBound() { hart_stbi_set_max_alloc(size_t(-1)); }
  } bound(size_t(w) * size_t(h) * 8 + size_t(h) + (size_t(1) << 20));
  std::unique_ptr<stbi_uc, void (*)(void*)> px(stbi_load_from_memory(p, len, &w, &h, &channels, 3), stbi_image_free);
  if (!px) throw Error(std::string("image: cannot decode it (") + stbi_failure_reason() + ")");
  RgbImage img;
  img.width = w;
  img.height = h;
  img.rgb.assign(px.get(), px.get() + size_t(w) * size_t(h) * 3);
  return img;
}

RgbImage load_image(const std::string& path, int64_t max_pixels) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open the image (" + std::strerror(errno) + ")");
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  try {
    return decode_image(bytes, max_pixels);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

}  // namespace hart::vision
