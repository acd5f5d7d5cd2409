#include "vision/image.h"

#include <climits>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>

#include <stb_image.h>

#include "common/error.h"
#include "vision/stb_image_limit.h"

namespace hart::vision {

RgbImage decode_image(std::span<const uint8_t> bytes, int64_t max_pixels) {
  if (bytes.empty()) throw Error("image: the data is empty");
  if (bytes.size() > size_t(INT_MAX)) throw Error("image: the data is larger than 2 GiB");
  const auto* p = reinterpret_cast<const stbi_uc*>(bytes.data());
  const int len = int(bytes.size());
  int w = 0, h = 0, channels = 0;
  if (!stbi_info_from_memory(p, len, &w, &h, &channels))
    throw Error(std::string("image: not a JPEG, PNG or BMP image, or corrupt (") + stbi_failure_reason() + ")");
  if (w <= 0 || h <= 0) throw Error("image: its size is " + std::to_string(w) + " x " + std::to_string(h));
  if (int64_t(w) * h > max_pixels)
    throw Error("image: " + std::to_string(w) + " x " + std::to_string(h) + " pixels is more than the limit of " +
                std::to_string(max_pixels));
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
