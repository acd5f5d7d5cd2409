// A tokenizer vocabulary as stored in GGUF (tokenizer.ggml.*): token texts, scores, types,
// special token ids and flags, with llama.cpp's defaults and fix-ups applied.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/pretokenizer.h"

namespace hart::gguf {
class File;
}

namespace hart::tok {

constexpr int32_t kNoToken = -1;

// Token attributes (a bit set): the GGUF token type plus llama.cpp's strip rules.
enum TokenAttr : uint32_t {
  kAttrUnknown = 1u << 0,
  kAttrUnused = 1u << 1,
  kAttrNormal = 1u << 2,
  kAttrControl = 1u << 3,
  kAttrUserDefined = 1u << 4,
  kAttrByte = 1u << 5,
  kAttrLstrip = 1u << 6,  // whitespace before this special token is dropped
  kAttrRstrip = 1u << 7,  // whitespace after it is dropped
};

enum class VocabKind {
  Spm,   // "llama": SentencePiece, score-driven merges, byte fallback <0xNN>
  Bpe,   // "gpt2": byte-level BPE with merge ranks and a regex pre-tokenizer; "gemma4": the same
         // SentencePiece-style (see PreTokenizerTraits)
  Wpm,   // "bert": WordPiece, greedy longest match
  Rwkv,  // "rwkv": RWKV World, greedy longest match over the tokens' bytes
};

struct TokenData {
  std::string text;
  float score = 0.0f;
  uint32_t attr = kAttrNormal;
};

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

struct Vocab {
  VocabKind kind = VocabKind::Spm;
  std::string pre;  // tokenizer.ggml.pre (BPE pre-tokenizer name), "gemma4" for that model
  PreTokenizerTraits pre_traits;  // BPE: what the pre-tokenizer family implies
  std::vector<TokenData> tokens;
  std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> ids;

  int32_t bos = kNoToken, eos = kNoToken, eot = kNoToken, eom = kNoToken;
  int32_t unk = kNoToken, sep = kNoToken, pad = kNoToken, mask = kNoToken;
  // Fill-in-the-middle: prefix, suffix, middle, pad, repository name and file separator.
  int32_t fim_pre = kNoToken, fim_suf = kNoToken, fim_mid = kNoToken;
  int32_t fim_pad = kNoToken, fim_rep = kNoToken, fim_sep = kNoToken;
  bool add_bos = false, add_eos = false;
  bool add_space_prefix = false;              // SPM: a space in front of the text
  bool lowercase = true, strip_accents = true;  // WPM normalizer
  size_t max_token_len = 0;                   // longest token text, in bytes

  std::vector<int32_t> specials;  // CONTROL / USER_DEFINED / UNKNOWN ids, longest text first
  std::vector<bool> eog;          // per id: generation stops here

  // Reads the vocabulary of `file`. Throws hart::Error when it has none (vocab-less GGUF,
  // tokenizer.ggml.model "none"), an unknown model, or inconsistent data (duplicate tokens,
  // arrays shorter than the token list, a special token id out of range).
  static Vocab load(const gguf::File& file);

  int32_t find(std::string_view text) const {
    const auto it = ids.find(text);
    return it == ids.end() ? kNoToken : it->second;
  }
  bool has(int32_t id, uint32_t attr) const { return (tokens[id].attr & attr) != 0; }
  int32_t size() const { return static_cast<int32_t>(tokens.size()); }
  // The token of one raw byte: "<0xNN>" (SPM byte fallback), else the byte's own text.
  int32_t byte_token(uint8_t byte) const;
};

// The byte a BYTE token "<0xNN>" stands for, or -1 when the text has another form.
int parse_byte_token(std::string_view text);
// The text "<0xNN>" of the BYTE token for `byte` (upper-case hex).
std::string byte_token_text(uint8_t byte);

}  // namespace hart::tok
