#include "grammar/grammar_constraint.h"

#include <bit>
#include <limits>

namespace hart::grammar {
namespace {

constexpr size_t kMaxCachedMasks = 512;  // x 19 kB for a 150k vocabulary

}  // namespace

GrammarConstraint::GrammarConstraint(std::shared_ptr<const Grammar> g, const VocabTrie& vocab)
    : g_(std::move(g)), vocab_(vocab), matcher_(*g_) {}

bool GrammarConstraint::allows(int32_t token) {
  if (token < 0 || token >= vocab_.n_vocab()) return false;
  if (vocab_.is_eog(token)) return matcher_.complete();
  const std::string& piece = vocab_.piece(token);
  if (piece.empty()) return false;
  Matcher m(matcher_);
  return m.feed(piece);
}

void GrammarConstraint::accept(int32_t token) {
  if (!allows(token)) throw Error("grammar: token " + std::to_string(token) + " does not continue the grammar");
  if (!vocab_.is_eog(token)) matcher_.feed(vocab_.piece(token));
}

// Walks the trie in preorder; a byte the grammar refuses skips the node's whole subtree.
void GrammarConstraint::compute(std::vector<uint64_t>& bits) {
  bits.assign((size_t(vocab_.n_vocab()) + 63) / 64, 0);
  auto set = [&](int32_t id) { bits[size_t(id) >> 6] |= uint64_t(1) << (id & 63); };
  if (matcher_.complete())
    for (int32_t id : vocab_.eog_tokens()) set(id);
  const auto& nodes = vocab_.nodes();
  const auto& tokens = vocab_.tokens();
  if (levels_.empty()) levels_.push_back(matcher_);
  levels_[0] = matcher_;
  std::vector<uint32_t> ends;  // subtree ends of the nodes on the current path
  for (uint32_t i = 1; i < nodes.size();) {
    while (!ends.empty() && i >= ends.back()) ends.pop_back();
    const size_t d = ends.size();
    if (levels_.size() <= d + 1) levels_.push_back(matcher_);
    const VocabTrie::Node& n = nodes[i];
    if (!levels_[d].step(n.byte, levels_[d + 1])) {
      i = n.end;
      continue;
    }
    for (uint32_t t = n.tokens_begin; t < n.tokens_end; t++) set(tokens[t]);
    ends.push_back(n.end);
    i++;
  }
}

const std::vector<uint64_t>& GrammarConstraint::allowed_bits() {
  matcher_.key(key_);
  std::string k(reinterpret_cast<const char*>(key_.data()), key_.size() * sizeof(uintptr_t));
  auto it = cache_.find(k);
  if (it != cache_.end()) return it->second;
  if (cache_.size() >= kMaxCachedMasks) cache_.clear();
  std::vector<uint64_t> bits;
  compute(bits);
  return cache_.emplace(std::move(k), std::move(bits)).first->second;
}

int64_t GrammarConstraint::mask(std::span<float> logits) {
  const std::vector<uint64_t>& bits = allowed_bits();
  const size_t n = std::min(logits.size(), size_t(vocab_.n_vocab()));
  constexpr float kNone = -std::numeric_limits<float>::infinity();
  int64_t allowed = 0;
  for (size_t w = 0; w * 64 < n; w++) {
    const uint64_t word = bits[w];
    allowed += std::popcount(word);
    if (word == ~uint64_t(0)) continue;
    for (size_t i = w * 64; i < std::min(n, w * 64 + 64); i++)
      if (!(word >> (i & 63) & 1)) logits[i] = kNone;
  }
  for (size_t i = n; i < logits.size(); i++) logits[i] = kNone;
  return allowed;
}

}  // namespace hart::grammar
