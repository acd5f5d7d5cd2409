// hart: the command-line front end. Dispatches to the registered subcommands.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "command.h"
#include "common/error.h"
#include "version.h"

namespace hart::cli {

std::map<std::string, Command>& commands() {
  static std::map<std::string, Command> table;
  return table;
}

}  // namespace hart::cli

namespace {

void usage(FILE* out) {
  std::fprintf(out, "usage: hart <command> [options]   (hart <command> --help for its options)\n");
  std::fprintf(out, "       hart --version           (-V: version, build and the CPU kernels it runs here)\n\n");
  for (const auto& [name, cmd] : hart::cli::commands())
    std::fprintf(out, "  %-10s %s\n", name.c_str(), cmd.help);
}

// llama.cpp's spelling `-dev et,cpu` (and `-dev=et,cpu`) as `--dev`: CLI11 reads multi-letter
// names only after two dashes. The respelled arguments live in `store` (reserved, so pointers into
// it stay valid).
void respell_dev_flag(int argc, char** argv, std::vector<std::string>& store) {
  store.reserve(size_t(argc));
  for (int i = 1; i < argc; i++) {
    const std::string_view a = argv[i];
    if (a == "--") return;
    if (a == "-dev" || a.starts_with("-dev=")) {
      argv[i] = store.emplace_back(std::string("--dev").append(a.substr(4))).data();
    }
  }
}

}  // namespace

// A model's pages are read from its file after loading (--mmap, and the stored rows repacked
// weights gave back): a file cut short meanwhile makes such a read a SIGBUS. Say so in one line.
extern "C" void on_sigbus(int) {
  static const char msg[] = "hart: a model file was truncated or replaced in place while in use; "
                            "replace model files by renaming a new file over them\n";
  (void)!::write(2, msg, sizeof msg - 1);
  _exit(1);
}

int main(int argc, char** argv) {
  // Past a file-size limit write() then fails with EFBIG and the command reports it like a full
  // disk (removing its temporary file), instead of the process being killed mid-write.
  std::signal(SIGXFSZ, SIG_IGN);
  std::signal(SIGBUS, on_sigbus);
  if (argc < 2 || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const bool version = !std::strcmp(argv[1], "--version") || !std::strcmp(argv[1], "-V");
  auto& table = hart::cli::commands();
  auto it = table.find(argv[1]);
  if (!version && it == table.end()) {
    std::fprintf(stderr, "hart: unknown command '%s' (see hart --help)\n", argv[1]);
    return 2;
  }
  if (version && argc > 2) {
    std::fprintf(stderr, "hart: %s takes no arguments\n", argv[1]);
    return 2;
  }
  std::vector<std::string> respelled;
  respell_dev_flag(argc, argv, respelled);
  std::string prog = std::string("hart ") + argv[1];
  argv[1] = prog.data();
  try {
    if (version) {
      hart::cli::print_version();
      return 0;
    }
    return it->second.fn(argc - 1, argv + 1);
  } catch (const hart::Error& e) {
    std::fprintf(stderr, "hart: error: %s\n", e.what());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "hart: error: out of memory\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hart: error: %s\n", e.what());
  }
  return 1;
}
