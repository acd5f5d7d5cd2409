// Running a shell command from the CLI tests: its exit status and what it wrote to the pipe.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace hart::testing {

struct Result {
  int status;
  std::string out;  // what the command wrote to the pipe
};

inline Result run_command(const std::string& cmd) {
  FILE* p = popen(cmd.c_str(), "r");
  Result r{-1, {}};
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

}  // namespace hart::testing
