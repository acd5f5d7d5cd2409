// Shared by the vision tests: a temporary folder holding the fixtures (fixtures.h).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "vision/fixtures.h"

namespace hart::vision::testing {

// A fresh folder under the system's temporary one, removed with the object.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "hart-vision-XXXXXX").string();
    path = mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string file(const char* name) const { return (path / name).string(); }
};

}  // namespace hart::vision::testing
