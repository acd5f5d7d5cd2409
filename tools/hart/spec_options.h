// The speculative-decoding flags of run, chat and bench, with llama.cpp's names, aliases and
// defaults (common/arg.cpp), and what they build: the drafters and the Speculator.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "model_options.h"
#include "spec/spec_factory.h"

namespace hart::cli {

// llama.cpp's option names of one dash and several letters, which CLI11 does not take: each is
// rewritten to its long name before parsing (parse_args).
extern const std::vector<std::pair<std::string, std::string>> kSpecShortAliases;

struct SpecOptions {
  std::string types;  // --spec-type list
  std::string draft_model;
  std::vector<std::string> draft_devices;
  spec::SpecParams p;

  void add_to(CLI::App& app);
  // Parses --spec-type and checks everything against the session's batch; false: no speculation.
  bool enabled(int n_batch);
};

// The drafters and the model a draft-simple one runs, for one target.
struct Speculation {
  std::unique_ptr<LoadedModel> draft;
  std::unique_ptr<Model> mtp;  // draft-mtp: the target's MTP block as a model (model/mtp_model.h)
  std::unique_ptr<spec::SpecFactory> factory;     // what a server's requests draft with
  std::unique_ptr<spec::Speculator> speculator;   // the command's one sequence's (none for serve)
  // After a generation: counts its tokens into the dynamic lookup cache and writes it (-lcd).
  void save_dynamic_cache(const std::vector<int32_t>& tokens) const;
};

// Loads the draft model (checking its vocabulary against the target's), or for draft-mtp takes
// the target's MTP block (a hart::Error for a model without one), and builds the drafters
// opt names; `mo` gives the threads, context and, without --spec-draft-device, the devices. With
// `sampling`, also the speculator of one sequence sampled so.
Speculation make_speculation(const SpecOptions& opt, const ModelOptions& mo, const LoadedModel& target,
                             const SamplerParams* sampling, int threads = 0);

// "hart: draft acceptance ..." on stderr.
void print_spec_stats(const spec::SpecStats& s);

}  // namespace hart::cli
