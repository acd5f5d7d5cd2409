// Incremental UTF-8 decoding, one byte at a time, for matching text that arrives in tokens: a
// character may be split over several of them. Refuses what RFC 3629 does (overlongs,
// surrogates, code points above U+10FFFF, stray continuation bytes).
#pragma once

#include <algorithm>
#include <cstdint>

namespace hart::grammar {

struct Utf8Decoder {
  enum Result { CHAR, PENDING, INVALID };
  char32_t value = 0;  // bits of the character so far
  uint8_t need = 0;    // continuation bytes still to come
  uint8_t len = 0;     // bytes of the character in all

  // CHAR: lo is the whole code point. PENDING: the character continues and can still become any
  // of [lo, hi].
  Result push(uint8_t b, char32_t& lo, char32_t& hi) {
    static constexpr char32_t kMinOfLength[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (need == 0) {
      if (b < 0x80) {
        lo = b;
        return CHAR;
      }
      need = (b >> 5) == 0x6 ? 1 : (b >> 4) == 0xE ? 2 : (b >> 3) == 0x1E ? 3 : 0;
      if (need == 0 || b == 0xC0 || b == 0xC1 || b > 0xF4) return reset(INVALID);
      value = b & (0x3F >> need);
      len = uint8_t(need + 1);
    } else {
      if ((b & 0xC0) != 0x80) return reset(INVALID);
      value = (value << 6) | (b & 0x3F);
      if (--need == 0) {
        lo = value;
        const bool ok = value >= kMinOfLength[len] && value <= 0x10FFFF && !(value >= 0xD800 && value <= 0xDFFF);
        return reset(ok ? CHAR : INVALID);
      }
    }
    const unsigned shift = 6u * need;
    lo = std::max<char32_t>(value << shift, kMinOfLength[len]);
    hi = std::min<char32_t>((value << shift) | ((char32_t(1) << shift) - 1), 0x10FFFF);
    const bool surrogate = lo >= 0xD800 && hi <= 0xDFFF;  // ED A0..BF: every completion is one
    return lo <= hi && !surrogate ? PENDING : reset(INVALID);
  }

 private:
  Result reset(Result r) {
    value = need = len = 0;
    return r;
  }
};

}  // namespace hart::grammar
