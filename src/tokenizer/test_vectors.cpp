#include "tokenizer/test_vectors.h"

#include <fstream>
#include <sstream>
#include <string_view>

#include "common/error.h"

namespace hart::tok {

std::vector<std::string> read_test_strings(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  constexpr std::string_view kSep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> strings;
  size_t pos = 0;
  for (size_t hit; (hit = text.find(kSep, pos)) != std::string::npos; pos = hit + kSep.size())
    strings.push_back(text.substr(pos, hit - pos));
  // Newer files (gemma-4) leave the separator out after the last string, as llama.cpp allows.
  if (pos != text.size()) strings.push_back(text.substr(pos));
  return strings;
}

std::string format_ids(std::span<const int32_t> ids) {
  std::string line;
  for (int32_t id : ids) {
    line += ' ';
    line += std::to_string(id);
  }
  return line;
}

}  // namespace hart::tok
