// Opening a GGUF file of the shared test data for the fuzzers and the seed writer: PATH itself,
// or PATH.gz decompressed in memory (the large vocabularies are stored gzip-compressed).
#pragma once

#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/error.h"
#include "gguf/gguf.h"

namespace hart::fuzz {

inline std::unique_ptr<gguf::File> open_testdata_gguf(const std::string& path) {
  if (std::filesystem::exists(path)) return gguf::File::open(path);
  const std::string gz_path = path + ".gz";
  gzFile gz = gzopen(gz_path.c_str(), "rb");
  if (!gz) throw Error(gz_path + ": cannot open");
  std::vector<uint8_t> bytes;
  uint8_t buf[1 << 16];
  int n;
  while ((n = gzread(gz, buf, sizeof buf)) > 0) bytes.insert(bytes.end(), buf, buf + n);
  gzclose(gz);
  if (n < 0) throw Error(gz_path + ": corrupt gzip data");
  return gguf::File::from_bytes(bytes, path);
}

}  // namespace hart::fuzz
