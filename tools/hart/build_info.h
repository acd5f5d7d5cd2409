// What a binary was built from, for measurements that say what they measured (hart bench --json)
// and for hart --version: the project version, the source revision (git describe, "-dirty" with
// uncommitted changes), compiler and flags.
#pragma once

namespace hart::cli {

struct BuildInfo {
  const char* version;   // the CMake project's VERSION
  const char* revision;
  const char* compiler;  // id, version and target processor
  const char* flags;
};

// Defined in the build tree's build_info.cpp (cmake/build_info.cmake), current at every build.
const BuildInfo& build_info();

}  // namespace hart::cli
