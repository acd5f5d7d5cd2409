// The incremental recognizer of a Grammar: the set of pushdown stacks llama.cpp's grammar
// sampler keeps. A stack lists the symbols still to match, innermost (next) last; every stack's
// top is a character class, and an empty stack means the input so far is a complete match.
// Input arrives as bytes of UTF-8: a character split over several tokens is held as pending
// bytes, checked against the classes on every byte so a dead prefix is refused at once.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "grammar/grammar.h"
#include "grammar/utf8_decoder.h"

namespace hart::grammar {

using Stack = std::vector<const Symbol*>;

class Matcher {
 public:
  // Starts at the grammar's root. `g` must outlive the matcher (stacks point into it).
  explicit Matcher(const Grammar& g);

  // Advances by one byte / by every byte of `bytes`. false: the grammar cannot continue with
  // them; the matcher is then unchanged (feed_byte) or unspecified (feed; use a copy).
  bool feed_byte(uint8_t b);
  bool feed(std::string_view bytes);
  // Computes in `to` the state after byte b, reusing to's buffers; false when b is refused.
  bool step(uint8_t b, Matcher& to) const;

  // Code-point level, for callers that decode UTF-8 themselves (GrammarConstraint): the state
  // after a whole character c into `to` (false when refused), and whether some character in
  // [lo, hi] could come next. Both expect no pending bytes.
  bool advance(char32_t c, Matcher& to) const { return accept_char(c, to); }
  bool may_start(char32_t lo, char32_t hi) const;

  // The input so far matches the whole grammar (and ends on a whole character).
  bool complete() const;
  // Some character can still follow.
  bool can_continue() const;

  // Identifies the state for a cache (equal keys: equal futures).
  void key(std::vector<uintptr_t>& out) const;

 private:
  void expand(Stack stack, std::vector<Stack>& out) const;
  bool accept_char(char32_t c, Matcher& to) const;
  void finish_set(std::vector<Stack>& set) const;

  const Grammar* g_;
  std::vector<Stack> stacks_;  // sorted, unique
  Utf8Decoder utf8_;           // a character begun but not finished
};

}  // namespace hart::grammar
