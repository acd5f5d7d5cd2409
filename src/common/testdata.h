// Locating ../shared/testdata from tests. Tests that need it call HART_REQUIRE_TESTDATA(path),
// which skips the test with a message when the folder (or the file) is absent.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace hart {

inline std::string testdata_dir() {
  const char* env = std::getenv("HART_TESTDATA");
  return env ? env : "../shared/testdata";
}

inline std::string testdata_path(const std::string& rel) { return testdata_dir() + "/" + rel; }

}  // namespace hart

#define HART_REQUIRE_TESTDATA(var, rel)                                               \
  const std::string var = ::hart::testdata_path(rel);                                 \
  if (!std::filesystem::exists(var)) GTEST_SKIP() << "test data not found: " << var \
                                                  << " (set HART_TESTDATA)"
