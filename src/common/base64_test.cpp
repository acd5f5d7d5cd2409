#include "common/base64.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

namespace hart {
namespace {

std::string text(const std::vector<uint8_t>& b) { return std::string(b.begin(), b.end()); }

TEST(Base64, Rfc4648Vectors) {
  const char* vectors[][2] = {{"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},        {"foo", "Zm9v"},
                              {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, coded] : vectors) {
    EXPECT_EQ(base64_encode(plain, std::strlen(plain)), coded);
    const auto back = base64_decode(coded);
    ASSERT_TRUE(back) << coded;
    EXPECT_EQ(text(*back), plain);
  }
}

TEST(Base64, RoundTripsRandomBytesOfEveryTail) {
  std::mt19937 rng(7);
  for (size_t n = 0; n < 70; n++) {
    std::vector<uint8_t> b(n);
    for (uint8_t& x : b) x = uint8_t(rng());
    const auto back = base64_decode(base64_encode(b.data(), b.size()));
    ASSERT_TRUE(back) << n;
    EXPECT_EQ(*back, b) << n;
  }
}

TEST(Base64, SkipsLineBreaks) { EXPECT_EQ(text(*base64_decode("Zm9v\r\nYmFy\n")), "foobar"); }

TEST(Base64, RefusesWhatIsNotBase64) {
  for (const char* bad : {"Zm9", "Zm9v!", "Zg==Zg==", "Z===", "Zg=v", "-_8=", "Zm9vY"})
    EXPECT_FALSE(base64_decode(bad)) << bad;
}

}  // namespace
}  // namespace hart
