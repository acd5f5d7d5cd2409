// SHA-256 (FIPS 180-4) of a byte stream, for recording exactly which model file a measurement
// ran on (hart bench --json). Portable C++, the same on every target hart builds for (the RISC-V
// cross build has no OpenSSL).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hart {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t n);
  // The digest as 64 lowercase hex digits; the object is spent afterwards.
  std::string hex_digest();

 private:
  void compress(const uint8_t* block);
  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buf_{};
  size_t buf_len_ = 0;
  uint64_t total_ = 0;  // bytes
};

// The file's digest; throws hart::Error when it cannot be read.
std::string sha256_of_file(const std::string& path);

inline std::string sha256_of(std::string_view s) {
  Sha256 h;
  h.update(s.data(), s.size());
  return h.hex_digest();
}

}  // namespace hart
