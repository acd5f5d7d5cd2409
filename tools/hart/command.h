// Subcommands register themselves: one file per subcommand, each ending with
//   HART_COMMAND(info, "show a GGUF file's metadata and tensors", cmd_info);
// where cmd_info(argc, argv) gets argv[0] == "hart info" and returns the exit code.
// A hart::Error escaping a command is printed as one line "hart: error: ..." with exit code 1.
#pragma once

#include <map>
#include <string>

namespace hart::cli {

using CommandFn = int (*)(int argc, char** argv);

struct Command {
  const char* help;
  CommandFn fn;
};

std::map<std::string, Command>& commands();

struct Register {
  Register(const char* name, const char* help, CommandFn fn) { commands()[name] = {help, fn}; }
};

}  // namespace hart::cli

#define HART_COMMAND(name, help, fn) \
  static const ::hart::cli::Register hart_register_##name(#name, help, fn)
