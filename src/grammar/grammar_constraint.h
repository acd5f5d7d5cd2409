// A Grammar as the sampler's TokenConstraint: which tokens of the vocabulary can continue the
// text generated so far.
//
// Speed comes from two caches. Matcher states (at character boundaries) are interned and their
// transitions by character memoized, so the grammar runs as a lazily built DFA: after warm-up a
// character costs one lookup, not a pass over the parse stacks. Bytes of a multi-byte character
// are decoded on the way (a Cursor), checked against the classes that could take it. And each state's token mask (one walk of the VocabTrie, a byte
// refused dropping the node's subtree) is kept, since constrained output revisits the same
// states (inside a JSON string every character leaves the stacks as they were).
#pragma once

#include <array>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "grammar/grammar.h"
#include "grammar/matcher.h"
#include "grammar/vocab_trie.h"
#include "sample/token_constraint.h"

namespace hart::grammar {

class GrammarConstraint : public TokenConstraint {
 public:
  // Both must outlive the constraint.
  GrammarConstraint(std::shared_ptr<const Grammar> g, const VocabTrie& vocab);

  bool allows(int32_t token) override;
  int64_t mask(std::span<float> logits) override;

  // Advances by a sampled token; throws hart::Error when the grammar refuses it.
  void accept(int32_t token);
  // The text so far is a whole match / nothing can follow it but the end.
  bool complete() const { return cur_.utf8.need == 0 && states_[size_t(cur_.state)].m.complete(); }
  bool finished() const { return complete() && !states_[size_t(cur_.state)].m.can_continue(); }

 private:
  static constexpr int32_t kUnknown = -2, kDead = -1;
  struct State {
    Matcher m;
    std::array<int32_t, 128> ascii;  // the state after each ASCII character, kDead, or kUnknown
    std::vector<int32_t> wide;       // the same per interval of wide_bounds_ (sized on first use)
    std::vector<uint64_t> allowed;   // the token mask, once computed
  };
  // A position in the text: a state, and the bytes of a character not yet complete.
  struct Cursor {
    int32_t state;
    Utf8Decoder utf8;
  };

  int32_t intern(const Matcher& m);
  int32_t next(int32_t state, char32_t c);
  bool step(Cursor& c, uint8_t b);
  bool after(Cursor& c, int32_t token);  // false when refused
  void compute_mask(const Cursor& from, std::vector<uint64_t>& bits);
  void bound_cache();

  std::shared_ptr<const Grammar> g_;
  const VocabTrie& vocab_;
  std::deque<State> states_;
  std::unordered_map<std::string, int32_t> ids_;  // Matcher::key -> index into states_
  // Code points above ASCII split into intervals no character class tells apart (for JSON
  // grammars, one: U+0080..U+10FFFF), so a state's transitions beyond ASCII are one per interval.
  std::vector<char32_t> wide_bounds_;  // interval i is [wide_bounds_[i], wide_bounds_[i + 1])
  std::vector<uintptr_t> key_;
  std::vector<uint64_t> scratch_;  // the mask at a cursor inside a character (not cached)
  Cursor cur_{};
};

}  // namespace hart::grammar
