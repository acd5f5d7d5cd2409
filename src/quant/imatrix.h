// llama.cpp's importance matrix (llama-imatrix's output), as llama-quantize reads it: for each
// weight tensor the mean of each input column's squared activation, per expert for stacked
// experts. The GGUF format (tensors <name>.in_sum2 [n_per_row, n_mat] and <name>.counts
// [1, n_mat], F32) and the legacy .dat format are both accepted.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace hart {

class ImportanceMatrix {
 public:
  // Throws hart::Error naming the file and what is wrong with it.
  static ImportanceMatrix load(const std::string& path);

  // The n_per_row * n_mat values of a weight tensor (matrix j's at [j * n_per_row ..)), or
  // nullptr when the file has none for it.
  const std::vector<float>* find(std::string_view tensor) const;
  size_t size() const { return values_.size(); }
  int chunk_count() const { return chunk_count_; }
  const std::vector<std::string>& datasets() const { return datasets_; }

 private:
  static ImportanceMatrix load_legacy(const std::string& path);
  std::unordered_map<std::string, std::vector<float>> values_;
  std::vector<std::string> datasets_;
  int chunk_count_ = 0;
};

}  // namespace hart
