#include "grammar/grammar.h"

namespace hart::grammar {

bool CharClass::matches(char32_t c) const {
  bool in = false;
  for (const auto& [lo, hi] : ranges)
    if (c >= lo && c <= hi) {
      in = true;
      break;
    }
  return in != negated;
}

bool CharClass::matches_some(char32_t lo, char32_t hi) const {
  if (!negated) {
    for (const auto& [a, b] : ranges)
      if (a <= hi && b >= lo) return true;
    return false;
  }
  // Some code point of [lo, hi] escapes every range: walk lo up past the ranges that cover it.
  // Ranges are few (a character class), so repeating the scan is cheap.
  char32_t c = lo;
  for (bool moved = true; moved && c <= hi;) {
    moved = false;
    for (const auto& [a, b] : ranges)
      if (c >= a && c <= b) {
        if (b >= hi) return false;
        c = b + 1;
        moved = true;
      }
  }
  return c <= hi;
}

}  // namespace hart::grammar
