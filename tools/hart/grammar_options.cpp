#include "grammar_options.h"

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "grammar/json_schema.h"
#include "grammar/tokenizer_vocab.h"

namespace hart::cli {

void GrammarOptions::add_to(CLI::App& app) {
  auto* g = app.add_option("--grammar", grammar, "GBNF grammar the output must match");
  auto* f = app.add_option("--grammar-file", grammar_file, "file with a GBNF grammar the output must match");
  auto* j = app.add_option("-j,--json-schema", json_schema, "JSON schema the output must match (JSON text)");
  g->excludes(f)->excludes(j);
  f->excludes(j);
}

std::shared_ptr<const grammar::Grammar> GrammarOptions::load() const {
  std::string gbnf = grammar;
  if (!grammar_file.empty()) {
    std::ifstream in(grammar_file, std::ios::binary);
    if (!in) throw Error("cannot read the grammar file '" + grammar_file + "'");
    gbnf.assign(std::istreambuf_iterator<char>(in), {});
  }
  if (!json_schema.empty()) {
    const auto schema = nlohmann::ordered_json::parse(json_schema, nullptr, false);
    if (schema.is_discarded()) throw Error("--json-schema is not valid JSON");
    gbnf = grammar::json_schema_to_gbnf(schema);
  }
  if (gbnf.empty()) return nullptr;
  return std::make_shared<const grammar::Grammar>(grammar::parse_gbnf(gbnf));
}

void ConstrainedSampling::attach(std::shared_ptr<const grammar::Grammar> g, const Tokenizer& tok, Sampler& sampler) {
  if (!g) return;
  vocab = grammar::vocab_trie_for(tok);
  constraint = std::make_unique<grammar::GrammarConstraint>(std::move(g), *vocab);
  sampler.set_constraint(constraint.get());
}

bool ConstrainedSampling::accept(int32_t token) {
  if (!constraint) return true;
  constraint->accept(token);
  return !constraint->finished();
}

}  // namespace hart::cli
