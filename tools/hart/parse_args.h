// Command-line parsing shared by the subcommands: a bad flag or value is a hart::Error, which
// main prints as one line ("hart: error: ...") with exit code 1, like every other user error.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"

namespace hart::cli {

// Parses argv into app. Returns false when --help was asked for and printed (the command then
// exits 0); throws hart::Error naming the bad flag or value otherwise.
// `aliases`: names llama.cpp spells with one dash and several letters (-md), which CLI11 does not
// take, each rewritten to its long name first.
inline bool parse_args(CLI::App& app, int argc, char** argv,
                       const std::vector<std::pair<std::string, std::string>>& aliases = {}) {
  std::vector<char*> args(argv, argv + argc);
  for (char*& a : args)
    for (const auto& [alias, name] : aliases)
      if (alias == a) a = const_cast<char*>(name.c_str());
  try {
    app.parse(int(args.size()), args.data());
    return true;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {
      app.exit(e);
      return false;
    }
    throw Error(std::string(e.what()) + " (see " + app.get_name() + " --help)");
  }
}

}  // namespace hart::cli
