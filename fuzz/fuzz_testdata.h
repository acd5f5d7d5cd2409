// Where the fuzzers and the seed writer find ../shared/testdata: $HART_TESTDATA, else the folder
// CMake was configured with.
#pragma once

#include <cstdlib>
#include <string>

namespace hart::fuzz {

inline std::string testdata_path(const std::string& rel) {
  const char* env = std::getenv("HART_TESTDATA");
  return std::string(env ? env : HART_TESTDATA_DEFAULT) + "/" + rel;
}

}  // namespace hart::fuzz
