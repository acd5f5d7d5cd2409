// Tokenizers on arbitrary text, for the fixed conformance vocabularies of the shared test data
// (SentencePiece, byte-level BPE with each pre-tokenizer, WordPiece when built with ICU).
// Input: byte 0 picks the vocabulary and the flags, the rest is the text.
// Checked: no crash / sanitizer report / exception, every id inside the vocabulary, every piece
// printable, and byte-level BPE with all 256 byte tokens round-trips valid UTF-8 exactly.
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/error.h"
#include "fuzz_testdata.h"
#include "gguf/gguf.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

using namespace hart;

namespace {

std::vector<uint8_t> gunzip(const std::string& path) {
  gzFile gz = gzopen(path.c_str(), "rb");
  if (!gz) throw Error(path + ": cannot open");
  std::vector<uint8_t> out;
  uint8_t buf[1 << 16];
  int n;
  while ((n = gzread(gz, buf, sizeof buf)) > 0) out.insert(out.end(), buf, buf + n);
  gzclose(gz);
  return out;
}

struct Vocab {
  std::unique_ptr<Tokenizer> tok;
  // Byte-level BPE whose vocabulary has a token for each of the 256 bytes: any valid UTF-8 text
  // round-trips. (Falcon's lacks 28 of them; like llama.cpp, those bytes are dropped.)
  bool lossless = false;
};

bool has_every_byte(const Tokenizer& tok) {
  for (int b = 0; b < 256; b++) {
    if (!tok.find_token(tok::byte_to_symbol(uint8_t(b)))) return false;
  }
  return true;
}

std::vector<Vocab> load_vocabs() {
  static const char* const kNames[] = {"llama-spm", "phi-3",    "gpt-2",   "falcon",    "deepseek-llm",
                                       "refact",    "starcoder", "llama-bpe", "qwen2",   "bert-bge"};
  std::vector<Vocab> out;
  for (const char* name : kNames) {
    const std::string path = fuzz::testdata_path(std::string("tokenizer/ggml-vocab-") + name + ".gguf");
    try {
      const std::unique_ptr<gguf::File> f = std::filesystem::exists(path)
                                                ? gguf::File::open(path, gguf::LoadMode::Memory)
                                                : gguf::File::from_bytes(gunzip(path + ".gz"), path);
      Vocab v{Tokenizer::from_gguf(*f)};
      v.lossless = v.tok->kind() == Tokenizer::Kind::Bpe && has_every_byte(*v.tok);
      out.push_back(std::move(v));
    } catch (const Error& e) {
      std::fprintf(stderr, "fuzz_tokenize: skipping %s: %s\n", name, e.what());  // e.g. no ICU
    }
  }
  if (out.empty()) {
    std::fprintf(stderr, "fuzz_tokenize: no vocabulary found; set HART_TESTDATA\n");
    std::abort();
  }
  return out;
}

std::vector<Vocab>& vocabs() {
  static std::vector<Vocab> all;
  return all;
}

}  // namespace

// Loaded before fuzzing starts, so the load does not count against the per-input timeout.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  vocabs() = load_vocabs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const Vocab& vocab = vocabs()[data[0] % vocabs().size()];
  const Tokenizer& tok = *vocab.tok;
  const bool add_special = data[0] & 0x40, parse_special = data[0] & 0x80;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);

  const std::vector<int32_t> ids = tok.encode(text, add_special, parse_special);
  for (int32_t id : ids) {
    if (id < 0 || id >= tok.n_vocab()) __builtin_trap();
    tok.token_to_piece(id, true);
  }
  const std::string back = tok.decode(ids, false);
  if (vocab.lossless && !add_special && !parse_special && tok::repair_utf8(text) == text &&
      back != text) {
    std::fprintf(stderr, "byte-level BPE round trip lost bytes: %zu in, %zu out\n", text.size(), back.size());
    __builtin_trap();
  }
  return 0;
}
