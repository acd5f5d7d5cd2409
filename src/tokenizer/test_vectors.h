// llama.cpp's tokenizer conformance files: NAME.gguf.inp holds test strings, each followed by
// "\n__ggml_vocab_test__\n" (the last one may lack it); NAME.gguf.out holds one line of ids per
// string.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace hart::tok {

// The test strings of an .inp file. Throws hart::Error when it cannot be read.
std::vector<std::string> read_test_strings(const std::string& path);

// One .out line: every id preceded by a space ("" for none).
std::string format_ids(std::span<const int32_t> ids);

}  // namespace hart::tok
