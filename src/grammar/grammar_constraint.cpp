#include "grammar/grammar_constraint.h"

#include <algorithm>
#include <bit>
#include <limits>

namespace hart::grammar {
namespace {

// States kept per request (each half a kB of transitions, plus a 19 kB mask for a 150k
// vocabulary once computed); past it the cache restarts from the current state.
constexpr size_t kMaxStates = 4096;

}  // namespace

GrammarConstraint::GrammarConstraint(std::shared_ptr<const Grammar> g, const VocabTrie& vocab) : g_(std::move(g)), vocab_(vocab) {
  wide_bounds_ = {0x80, 0x110000};
  for (const CharClass& cc : g_->classes)
    for (const auto& [lo, hi] : cc.ranges)
      for (char32_t b : {lo, char32_t(hi + 1)})
        if (b > 0x80 && b < 0x110000) wide_bounds_.push_back(b);
  std::sort(wide_bounds_.begin(), wide_bounds_.end());
  wide_bounds_.erase(std::unique(wide_bounds_.begin(), wide_bounds_.end()), wide_bounds_.end());
  cur_.state = intern(Matcher(*g_));
}

int32_t GrammarConstraint::intern(const Matcher& m) {
  m.key(key_);
  std::string k(reinterpret_cast<const char*>(key_.data()), key_.size() * sizeof(uintptr_t));
  auto [it, added] = ids_.try_emplace(std::move(k), int32_t(states_.size()));
  if (added) {
    states_.push_back({m, {}, {}, {}});
    states_.back().ascii.fill(kUnknown);
  }
  return it->second;
}

int32_t GrammarConstraint::next(int32_t state, char32_t c) {
  State& st = states_[size_t(state)];
  int32_t* memo;
  if (c < 128) {
    memo = &st.ascii[c];
  } else {
    if (st.wide.empty()) st.wide.assign(wide_bounds_.size() - 1, kUnknown);
    memo = &st.wide[size_t(std::upper_bound(wide_bounds_.begin(), wide_bounds_.end(), c) - wide_bounds_.begin() - 1)];
  }
  if (*memo != kUnknown) return *memo;
  Matcher to(st.m);
  // Every code point of the interval moves the stacks alike, so c stands for all of them.
  *memo = st.m.advance(c, to) ? intern(to) : kDead;  // a deque: st and memo stay valid
  return *memo;
}

bool GrammarConstraint::step(Cursor& c, uint8_t b) {
  char32_t lo = 0, hi = 0;
  switch (c.utf8.push(b, lo, hi)) {
    case Utf8Decoder::CHAR: return (c.state = next(c.state, lo)) != kDead;
    case Utf8Decoder::INVALID: return false;
    case Utf8Decoder::PENDING: break;
  }
  return states_[size_t(c.state)].m.may_start(lo, hi);
}

bool GrammarConstraint::after(Cursor& c, int32_t token) {
  for (char b : vocab_.piece(token))
    if (!step(c, uint8_t(b))) return false;
  return true;
}

void GrammarConstraint::bound_cache() {
  if (states_.size() < kMaxStates) return;
  const Matcher keep = states_[size_t(cur_.state)].m;
  states_.clear();
  ids_.clear();
  cur_.state = intern(keep);
}

bool GrammarConstraint::allows(int32_t token) {
  if (token < 0 || token >= vocab_.n_vocab()) return false;
  if (vocab_.is_eog(token)) return complete();
  if (vocab_.piece(token).empty()) return false;
  bound_cache();
  Cursor c = cur_;
  return after(c, token);
}

void GrammarConstraint::accept(int32_t token) {
  if (!allows(token)) throw Error("grammar: token " + std::to_string(token) + " does not continue the grammar");
  if (!vocab_.is_eog(token)) after(cur_, token);
}

// Walks the trie in preorder; a byte the grammar refuses skips the node's whole subtree.
void GrammarConstraint::compute_mask(const Cursor& from, std::vector<uint64_t>& bits) {
  bits.assign((size_t(vocab_.n_vocab()) + 63) / 64, 0);
  auto set = [&](int32_t id) { bits[size_t(id) >> 6] |= uint64_t(1) << (id & 63); };
  if (from.utf8.need == 0 && states_[size_t(from.state)].m.complete())
    for (int32_t id : vocab_.eog_tokens()) set(id);
  const auto& nodes = vocab_.nodes();
  const auto& tokens = vocab_.tokens();
  std::vector<uint32_t> ends;  // subtree ends of the nodes on the current path
  std::vector<Cursor> at{from};  // at[d]: the cursor after the path's first d bytes
  for (uint32_t i = 1; i < nodes.size();) {
    while (!ends.empty() && i >= ends.back()) {
      ends.pop_back();
      at.pop_back();
    }
    const VocabTrie::Node& n = nodes[i];
    Cursor c = at.back();
    if (!step(c, n.byte)) {
      i = n.end;
      continue;
    }
    for (uint32_t t = n.tokens_begin; t < n.tokens_end; t++) set(tokens[t]);
    ends.push_back(n.end);
    at.push_back(c);
    i++;
  }
}

int64_t GrammarConstraint::mask(std::span<float> logits) {
  bound_cache();
  const std::vector<uint64_t>* bits = &scratch_;
  if (cur_.utf8.need == 0) {
    State& s = states_[size_t(cur_.state)];
    if (s.allowed.empty()) compute_mask(cur_, s.allowed);
    bits = &s.allowed;
  } else {
    compute_mask(cur_, scratch_);
  }
  const size_t n = std::min(logits.size(), size_t(vocab_.n_vocab()));
  constexpr float kNone = -std::numeric_limits<float>::infinity();
  int64_t allowed = 0;
  for (size_t w = 0; w * 64 < n; w++) {
    const uint64_t word = (*bits)[w];
    allowed += std::popcount(word);
    if (word == ~uint64_t(0)) continue;
    for (size_t i = w * 64; i < std::min(n, w * 64 + 64); i++)
      if (!(word >> (i & 63) & 1)) logits[i] = kNone;
  }
  for (size_t i = n; i < logits.size(); i++) logits[i] = kNone;
  return allowed;
}

}  // namespace hart::grammar
