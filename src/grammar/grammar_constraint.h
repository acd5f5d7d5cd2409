// A Grammar as the sampler's TokenConstraint: which tokens of the vocabulary can continue the
// text generated so far. The full mask walks the VocabTrie once with the Matcher; masks are
// cached by matcher state, since constrained output revisits the same states (inside a JSON
// string every character leaves the stacks as they were).
#pragma once

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
  bool complete() const { return matcher_.complete(); }
  bool finished() const { return matcher_.complete() && !matcher_.can_continue(); }

 private:
  const std::vector<uint64_t>& allowed_bits();
  void compute(std::vector<uint64_t>& bits);

  std::shared_ptr<const Grammar> g_;
  const VocabTrie& vocab_;
  Matcher matcher_;
  std::vector<Matcher> levels_;  // scratch for the trie walk: the matcher at each depth
  std::vector<uintptr_t> key_;
  std::unordered_map<std::string, std::vector<uint64_t>> cache_;
};

}  // namespace hart::grammar
