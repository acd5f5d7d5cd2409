// Tokenizers on arbitrary text, for the fixed conformance vocabularies of the shared test data
// (SentencePiece, byte-level BPE with each pre-tokenizer, SentencePiece-style BPE, WordPiece when
// built with ICU) and the RWKV World vocabulary of the rwkv7 tiny model.
// Input: byte 0 picks the vocabulary and the flags, the rest is the text.
// Checked: no crash / sanitizer report / exception, every id inside the vocabulary, every piece
// printable, byte-level BPE with all 256 byte tokens round-trips valid UTF-8 exactly, and RWKV
// round-trips any bytes.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "common/error.h"
#include "fuzz_testdata.h"
#include "testdata_gguf.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

using namespace hart;

namespace {

struct Vocab {
  std::unique_ptr<Tokenizer> tok;
  // Byte-level BPE whose vocabulary has a token for each of the 256 bytes: any valid UTF-8 text
  // round-trips. (Falcon's lacks 28 of them; like llama.cpp, those bytes are dropped.)
  bool lossless = false;
};

// Each byte's symbol in GPT-2's byte alphabet is a token that decodes to the byte. (In
// SentencePiece-style BPE such as Gemma 4's, "Ā" is just a letter.)
bool has_every_byte(const Tokenizer& tok) {
  for (int b = 0; b < 256; b++) {
    const auto id = tok.find_token(tok::byte_to_symbol(uint8_t(b)));
    if (!id || tok.token_to_piece(*id) != std::string(1, char(b))) return false;
  }
  return true;
}

std::vector<Vocab> load_vocabs() {
  static const char* const kFiles[] = {
      "tokenizer/ggml-vocab-llama-spm", "tokenizer/ggml-vocab-phi-3",        "tokenizer/ggml-vocab-gpt-2",
      "tokenizer/ggml-vocab-falcon",    "tokenizer/ggml-vocab-deepseek-llm", "tokenizer/ggml-vocab-refact",
      "tokenizer/ggml-vocab-starcoder", "tokenizer/ggml-vocab-llama-bpe",    "tokenizer/ggml-vocab-qwen2",
      "tokenizer/ggml-vocab-bert-bge",  "archs/tokenizer/ggml-vocab-qwen35", "archs/tokenizer/ggml-vocab-gemma-4",
      "archs/models/rwkv7-tiny-F32"};
  std::vector<Vocab> out;
  for (const char* file : kFiles) {
    try {
      Vocab v{Tokenizer::from_gguf(*fuzz::open_testdata_gguf(fuzz::testdata_path(std::string(file) + ".gguf")))};
      v.lossless = v.tok->kind() == Tokenizer::Kind::Bpe && has_every_byte(*v.tok);
      out.push_back(std::move(v));
    } catch (const Error& e) {
      std::fprintf(stderr, "fuzz_tokenize: skipping %s: %s\n", file, e.what());  // e.g. no ICU
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
  // RWKV matches the text's bytes as they are; with special tokens rendered ("<s>" in plain text
  // is token <s> too) nothing is lost.
  if (tok.kind() == Tokenizer::Kind::Rwkv && tok.decode(ids, true) != text) {
    std::fprintf(stderr, "RWKV round trip lost bytes: %zu in\n", text.size());
    __builtin_trap();
  }
  return 0;
}
