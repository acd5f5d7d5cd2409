// One exception type for every user-facing failure (bad file, bad flag, bad request).
// The message is a complete sentence fragment that names the problem; frontends print it on one
// line and exit non-zero (CLI) or map it to an HTTP error (server).
#pragma once

#include <stdexcept>
#include <string>

namespace hart {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace hart
