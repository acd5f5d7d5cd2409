#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "common/error.h"
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
  EXPECT_NE(decode_error(text).find("not a JPEG, PNG or BMP image"), std::string::npos);
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
