#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "common/error.h"
#ifdef HART_WEBP
#include <webp/encode.h>
#endif
#include "vision/image.h"
#include "vision/preprocess.h"
#include "vision/resample.h"
#include "vision/vision_testing.h"

namespace hart::vision {
namespace {

using testing::TempDir;

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string decode_error(std::span<const uint8_t> bytes, int64_t max_pixels = kMaxImagePixels) {
  try {
    decode_image(bytes, max_pixels);
  } catch (const Error& e) {
    return e.what();
  }
  return "(decoded)";
}

RgbImage image(int w, int h, std::initializer_list<uint8_t> grey) {
  RgbImage img{w, h, {}};
  for (uint8_t v : grey) img.rgb.insert(img.rgb.end(), {v, v, v});
  return img;
}

TEST(Image, DecodesThePngPixelForPixel) {
  TempDir dir;
  fixtures::write_png(dir.file("a.png"), 40, 27);
  const RgbImage img = load_image(dir.file("a.png"));
  ASSERT_EQ(img.width, 40);
  ASSERT_EQ(img.height, 27);
  const uint8_t* p = &img.rgb[(size_t(13) * 40 + 21) * 3];  // the pattern fixtures.cpp draws at (21, 13)
  EXPECT_EQ(p[0], 21 * 255 / 39);
  EXPECT_EQ(p[1], 13 * 255 / 26);
  EXPECT_EQ(p[2], ((21 / 5 + 13 / 4) % 2) * 200 + (21 * 13) % 56);
}

TEST(Image, RefusesCorruptTruncatedAndHugeImages) {
  TempDir dir;
  fixtures::write_png(dir.file("a.png"), 40, 27);
  std::vector<uint8_t> png = read_bytes(dir.file("a.png"));
  EXPECT_NE(decode_error({}).find("empty"), std::string::npos);
  const std::vector<uint8_t> text = {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd'};
  EXPECT_NE(decode_error(text).find("not a JPEG, PNG, BMP or WebP image"), std::string::npos);
  EXPECT_NE(decode_error(std::span(png).first(png.size() / 2)).find("image:"), std::string::npos);
  EXPECT_NE(decode_error(png, 1000).find("40 x 27 pixels is more than the limit of 1000"), std::string::npos);
  // fuzz_image's input: a truncated DHT whose counts sum to 1,953, past the end of the 256-entry
  // table Debian's stb_image writes them into.
  const std::vector<uint8_t> dht = {0xFF, 0xD8, 0xFF, 0xC4, 0xD9, 0x00, 0x00, 0xFF, 0xFF, 0xFF,
                                    0xFF, 0xFF, 0xFF, 0xFF, 0xA8};
  EXPECT_NE(decode_error(dht).find("a Huffman table of more than 256 codes"), std::string::npos);
  // A decompression bomb: the header claims 10000 x 10000 (IHDR's width and height, bytes 16..23),
  // refused before a pixel is decoded.
  for (int i : {16, 20}) png[size_t(i)] = 0, png[size_t(i) + 1] = 0, png[size_t(i) + 2] = 0x27, png[size_t(i) + 3] = 0x10;
  EXPECT_NE(decode_error(png).find("10000 x 10000 pixels is more than the limit"), std::string::npos);
  EXPECT_EQ(decode_error(read_bytes(dir.file("a.png"))), "(decoded)");
  try {
    load_image(dir.file("missing.png"));
    ADD_FAILURE() << "a missing file loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing.png: cannot open"), std::string::npos);
  }
}

// WebP files made by libwebp's own encoder: lossless ones decode pixel for pixel, lossy ones near
// the pixels; a cut, damaged or huge one is refused with the reason.
TEST(Image, DecodesWebP) {
  const int w = 37, h = 23;
  std::vector<uint8_t> rgb(size_t(w) * h * 3);
  for (size_t i = 0; i < rgb.size(); i++) rgb[i] = uint8_t((i * 7 + i / 3 * 13) % 251);
#ifdef HART_WEBP
  uint8_t* out = nullptr;
  const size_t n = WebPEncodeLosslessRGB(rgb.data(), w, h, w * 3, &out);
  ASSERT_GT(n, 0u);
  const std::vector<uint8_t> lossless(out, out + n);
  WebPFree(out);
  const RgbImage img = decode_image(lossless);
  EXPECT_EQ(img.width, w);
  EXPECT_EQ(img.height, h);
  EXPECT_EQ(img.rgb, rgb);
  std::vector<uint8_t> smooth(rgb.size());
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      for (int c = 0; c < 3; c++) smooth[(size_t(y) * w + x) * 3 + c] = uint8_t(x * 3 + y * 2 + c * 40);
  const size_t m = WebPEncodeRGB(smooth.data(), w, h, w * 3, 95.0f, &out);
  ASSERT_GT(m, 0u);
  const std::vector<uint8_t> lossy(out, out + m);
  WebPFree(out);
  const RgbImage near = decode_image(lossy);
  ASSERT_EQ(near.rgb.size(), smooth.size());
  for (size_t i = 0; i < smooth.size(); i++) ASSERT_NEAR(int(near.rgb[i]), int(smooth[i]), 24) << i;
  EXPECT_NE(decode_error(std::span(lossless).first(lossless.size() / 2)).find("corrupt WebP"), std::string::npos);
  EXPECT_NE(decode_error(lossless, 100).find("37 x 23 pixels is more than the limit of 100"), std::string::npos);
  // A header that claims a 16384 x 16384 canvas (VP8X), refused before anything is decoded.
  std::vector<uint8_t> bomb = {'R', 'I', 'F', 'F', 22, 0, 0, 0, 'W', 'E', 'B', 'P', 'V', 'P', '8', 'X', 10, 0, 0, 0,
                               0, 0, 0, 0, 0xFF, 0x3F, 0, 0xFF, 0x3F, 0};
  EXPECT_NE(decode_error(bomb).find("16384 x 16384 pixels is more than the limit"), std::string::npos) << decode_error(bomb);
#else
  GTEST_SKIP() << "built without libwebp-dev: WebP images are refused";
#endif
  const std::vector<uint8_t> riff = {'R', 'I', 'F', 'F', 4, 0, 0, 0, 'W', 'E', 'B', 'P'};
  EXPECT_NE(decode_error(riff).find("WebP"), std::string::npos);
}

TEST(Resample, IsPillowsFixedPointFilter) {
  // Bilinear 4 -> 2 widens the triangle to 2 input pixels: output 0 takes inputs 0..2 at
  // weights 0.75, 0.75, 0.25 (over 1.75): (0 * .75 + 100 * .75 + 200 * .25) / 1.75 = 71.4 -> 71.
  const RgbImage row = image(4, 1, {0, 100, 200, 255});
  const RgbImage half = resize(row, 2, 1, ResizeFilter::BILINEAR);
  ASSERT_EQ(half.width, 2);
  EXPECT_EQ(half.rgb[0], 71);
  // Output 1 takes inputs 1..3 at 0.25, 0.75, 0.75: (25 + 150 + 191.25) / 1.75 = 209.3 -> 209.
  EXPECT_EQ(half.rgb[3], 209);
  // Vertically the same filter.
  const RgbImage col = image(1, 4, {0, 100, 200, 255});
  EXPECT_EQ(resize(col, 1, 2, ResizeFilter::BILINEAR).rgb[3], 209);
  // A flat image stays flat for every filter (the weights are normalized).
  for (ResizeFilter f : {ResizeFilter::BILINEAR, ResizeFilter::BICUBIC, ResizeFilter::LANCZOS}) {
    const RgbImage flat = resize(image(5, 3, {77, 77, 77, 77, 77, 77, 77, 77, 77, 77, 77, 77, 77, 77, 77}), 9, 7, f);
    for (uint8_t v : flat.rgb) ASSERT_EQ(v, 77);
  }
  EXPECT_THROW(resize(row, 0, 1, ResizeFilter::LANCZOS), Error);
}

TEST(Resample, CropsInsideTheImageOnly) {
  const RgbImage img = image(3, 2, {1, 2, 3, 4, 5, 6});
  const RgbImage c = crop(img, 1, 1, 2, 1);
  ASSERT_EQ(c.rgb.size(), 6u);
  EXPECT_EQ(c.rgb[0], 5);
  EXPECT_EQ(c.rgb[3], 6);
  EXPECT_THROW(crop(img, 2, 0, 2, 1), Error);
}

TEST(Preprocess, Idefics3TilesAndNormalizes) {
  ClipHParams hp;
  hp.image_size = 16;
  hp.patch_size = 4;
  hp.n_merge = 2;
  hp.longest_edge = 32;
  hp.mean = {0.5f, 0.5f, 0.5f};
  hp.std = {0.5f, 0.25f, 0.5f};
  // 40 x 27: the longer side to 32, the other int(32 / (40 / 27)) = 21, made even: 22; then
  // up to whole 16-pixel tiles, 32 x 32: 2 x 2 slices and the overview.
  RgbImage img{40, 27, std::vector<uint8_t>(40 * 27 * 3, 255)};
  const ImageTiles t = preprocess(hp, img);
  EXPECT_EQ(t.grid_x, 2);
  EXPECT_EQ(t.grid_y, 2);
  ASSERT_EQ(t.tiles.size(), 5u);
  for (const Tile& tile : t.tiles) {
    ASSERT_EQ(tile.width, 16);
    ASSERT_EQ(tile.planar.size(), 16u * 16 * 3);
    EXPECT_FLOAT_EQ(tile.planar[0], 1.0f);              // (1 - 0.5) / 0.5, red plane
    EXPECT_FLOAT_EQ(tile.planar[16 * 16], 2.0f);        // (1 - 0.5) / 0.25, green plane
  }
  // A tall image: 27 x 40 -> 22 x 32 -> 32 x 32 as well; a small one is scaled up to the edge.
  EXPECT_EQ(preprocess(hp, RgbImage{27, 40, std::vector<uint8_t>(27 * 40 * 3)}).grid_y, 2);
  EXPECT_EQ(preprocess(hp, RgbImage{3, 2, std::vector<uint8_t>(3 * 2 * 3)}).tiles.size(), 5u);
  EXPECT_EQ(preprocess(hp, RgbImage{100, 10, std::vector<uint8_t>(100 * 10 * 3)}).grid_y, 1);
}

}  // namespace
}  // namespace hart::vision
