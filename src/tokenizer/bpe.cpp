// Byte-level BPE (GPT-2 family) as llama.cpp runs it: the pre-tokenizer splits the text into
// words, each word's bytes are written in the byte-level alphabet, and within a word the
// adjacent pair with the lowest merge rank is merged until no ranked pair is left.
// SentencePiece-style BPE (Gemma 4) merges the same way over raw UTF-8 with spaces written "▁".
#include <string>

#include "common/error.h"
#include "gguf/gguf.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/encoder.h"
#include "tokenizer/pair_merge.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/utf8.h"

namespace hart::tok {

namespace {

class BpeEncoder final : public Encoder {
 public:
  BpeEncoder(const Vocab& vocab, const gguf::File& file) : v_(vocab), pre_(vocab.pre) {
    auto merges = file.get_string_array("tokenizer.ggml.merges");
    if (!merges) throw Error("BPE vocabulary without tokenizer.ggml.merges");
    ranks_.reserve(merges->size());
    // A merge is "left right"; ranks follow the order of the list, the first entry wins.
    for (size_t i = 0; i < merges->size(); ++i) {
      std::string& m = (*merges)[i];
      if (m.find(' ', 1) == std::string::npos) continue;
      ranks_.emplace(std::move(m), static_cast<int32_t>(i));
    }
  }

  void encode(std::string_view text, bool, std::vector<int32_t>& out) const override {
    const PreTokenizerTraits& traits = v_.pre_traits;
    std::string clean = repair_utf8(text);
    if (traits.sentencepiece_style) clean = replace_all(clean, " ", kSpaceMarker);
    for (std::string_view raw : pre_.split(clean)) {
      const std::string word = traits.sentencepiece_style ? std::string(raw) : bytes_to_symbols(raw);
      const bool newline_run = word.find_first_not_of('\n') == std::string::npos;
      if (traits.ignore_merges || (traits.whole_newline_runs && newline_run)) {
        if (const int32_t id = v_.find(word); id != kNoToken) {
          out.push_back(id);
          continue;
        }
      }
      merge(word, out);
    }
  }

 private:
  void merge(std::string_view word, std::vector<int32_t>& out) const {
    // A pair's priority is its merge's rank, lowest first.
    std::string key;
    const auto rank = [&](std::string_view l, std::string_view r) -> std::optional<double> {
      key.assign(l).append(" ").append(r);
      const auto it = ranks_.find(std::string_view(key));
      if (it == ranks_.end()) return std::nullopt;
      return -static_cast<double>(it->second);
    };
    for (std::string_view piece : merge_pairs(word, rank)) {
      if (const int32_t id = v_.find(piece); id != kNoToken) {
        out.push_back(id);
        continue;
      }
      // Not a token: llama.cpp emits the tokens of the piece's single bytes (the byte's own
      // text, <0xNN> in SentencePiece-style vocabularies) and drops bytes without one.
      for (char c : piece)
        if (const int32_t id = byte_fallback(static_cast<uint8_t>(c)); id != kNoToken) out.push_back(id);
    }
  }

  int32_t byte_fallback(uint8_t byte) const {
    if (v_.pre_traits.sentencepiece_style) return v_.find(byte_token_text(byte));
    return v_.find(std::string_view(reinterpret_cast<const char*>(&byte), 1));
  }

  const Vocab& v_;
  PreTokenizer pre_;
  std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> ranks_;
};

}  // namespace

std::unique_ptr<Encoder> make_bpe_encoder(const Vocab& vocab, const gguf::File& file) {
  return std::make_unique<BpeEncoder>(vocab, file);
}

}  // namespace hart::tok
