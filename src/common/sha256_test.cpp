#include "common/sha256.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>

#include "common/error.h"

namespace hart {
namespace {

// FIPS 180-4's examples (NIST's SHA-256 example values) and the empty message.
TEST(Sha256, StandardVectors) {
  EXPECT_EQ(sha256_of(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_of("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  Sha256 million;
  const std::string a(1000, 'a');
  for (int i = 0; i < 1000; i++) million.update(a.data(), a.size());
  EXPECT_EQ(million.hex_digest(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Padding at every length around the block boundaries, fed whole or in uneven pieces.
TEST(Sha256, PiecesGiveTheWholeDigest) {
  std::mt19937 rng(5);
  for (size_t len : {55u, 56u, 57u, 63u, 64u, 65u, 119u, 120u, 128u, 1000u}) {
    std::string s(len, '\0');
    for (char& c : s) c = char(rng());
    Sha256 pieces;
    for (size_t i = 0; i < len;) {
      const size_t n = std::min<size_t>(len - i, 1 + rng() % 70);
      pieces.update(s.data() + i, n);
      i += n;
    }
    EXPECT_EQ(pieces.hex_digest(), sha256_of(s)) << len;
  }
}

TEST(Sha256, OfAFile) {
  const std::string path = ::testing::TempDir() + "sha256_test.bin";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fputs("abc", f);
  std::fclose(f);
  EXPECT_EQ(sha256_of_file(path), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  std::remove(path.c_str());
  EXPECT_THROW(sha256_of_file(path), Error);
}

}  // namespace
}  // namespace hart
