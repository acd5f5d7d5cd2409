// llama.cpp's flags for constrained generation: --grammar, --grammar-file, -j/--json-schema.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "grammar/grammar_constraint.h"
#include "grammar/vocab_trie.h"
#include "sample/sampler.h"
#include "tokenizer/tokenizer.h"

namespace hart::cli {

struct GrammarOptions {
  std::string grammar, grammar_file, json_schema;

  void add_to(CLI::App& app);
  // The grammar the flags give, or nullptr; throws hart::Error for a malformed one.
  std::shared_ptr<const grammar::Grammar> load() const;
};

// A constraint that a sampler consults and generation advances (see run.cpp).
struct ConstrainedSampling {
  std::unique_ptr<grammar::VocabTrie> vocab;
  std::unique_ptr<grammar::GrammarConstraint> constraint;

  // Sets the sampler's constraint when `g` is not null.
  void attach(std::shared_ptr<const grammar::Grammar> g, const Tokenizer& tok, Sampler& sampler);
  // Advances by a generated token; false once nothing but the end can follow.
  bool accept(int32_t token);
};

}  // namespace hart::cli
