#include "common/base64.h"

namespace hart {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int value_of(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

std::string base64_encode(const void* data, size_t n) {
  const auto* b = static_cast<const uint8_t*>(data);
  std::string out;
  out.reserve((n + 2) / 3 * 4);
  for (size_t i = 0; i < n; i += 3) {
    const uint32_t v = uint32_t(b[i]) << 16 | (i + 1 < n ? uint32_t(b[i + 1]) << 8 : 0) | (i + 2 < n ? b[i + 2] : 0);
    out += kAlphabet[v >> 18 & 63];
    out += kAlphabet[v >> 12 & 63];
    out += i + 1 < n ? kAlphabet[v >> 6 & 63] : '=';
    out += i + 2 < n ? kAlphabet[v & 63] : '=';
  }
  return out;
}

std::optional<std::vector<uint8_t>> base64_decode(std::string_view text) {
  std::vector<uint8_t> out;
  out.reserve(text.size() / 4 * 3);
  uint32_t acc = 0;
  int n_chars = 0, n_pad = 0;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    if (c == '=') {
      n_pad++;
      acc <<= 6;
    } else {
      const int v = value_of(c);
      if (v < 0 || n_pad > 0) return std::nullopt;  // a character after padding
      acc = acc << 6 | uint32_t(v);
    }
    if (++n_chars % 4 != 0) continue;
    if (n_pad > 2) return std::nullopt;
    out.push_back(uint8_t(acc >> 16));
    if (n_pad < 2) out.push_back(uint8_t(acc >> 8));
    if (n_pad < 1) out.push_back(uint8_t(acc));
    acc = 0;
    if (n_pad > 0) n_pad = 3;  // the group with padding is the last one: anything after it fails
  }
  if (n_chars % 4 != 0) return std::nullopt;
  return out;
}

}  // namespace hart
