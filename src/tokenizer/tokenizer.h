// Text <-> token ids for a model, from the vocabulary stored in its GGUF file, producing the
// same ids as llama.cpp: SentencePiece ("llama"), byte-level BPE ("gpt2", pre-tokenizer chosen
// by tokenizer.ggml.pre), SentencePiece-style BPE ("gemma4"), WordPiece ("bert") and RWKV World
// ("rwkv").
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hart::gguf {
class File;
}

namespace hart {

class Tokenizer {
 public:
  enum class Kind { Spm, Bpe, Wpm, Rwkv };  // "gemma4" is Bpe

  // Reads tokenizer.ggml.* of `file`. Throws hart::Error when the file has no vocabulary or
  // an inconsistent one (unknown model / pre-tokenizer, duplicate tokens, special token ids out
  // of range, missing merges, ...).
  static std::unique_ptr<Tokenizer> from_gguf(const gguf::File& file);
  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // `add_special`: BOS / EOS (and BERT's [SEP]) as the file's add_bos / add_eos say.
  // `parse_special`: texts of control tokens in `text` ("<|im_start|>") become those tokens;
  // otherwise they are tokenized as plain text. User-defined tokens are always matched.
  // Invalid UTF-8 bytes are read as U+FFFD. Throws hart::Error for text the vocabulary has no
  // token for (a byte with no byte token, and no <unk> to stand for it).
  std::vector<int32_t> encode(std::string_view text, bool add_special, bool parse_special) const;

  // The text of one token: bytes of byte tokens, "▁" as space, RWKV's escaped bytes unescaped.
  // Control and unknown tokens give "" unless `special`. Throws hart::Error for an id outside the vocabulary.
  std::string token_to_piece(int32_t id, bool special = false) const;

  // The pieces concatenated, byte-exact (a UTF-8 character split over byte tokens comes back
  // whole). Like llama.cpp, the space SentencePiece put in front of the text is dropped from the
  // first token.
  std::string decode(std::span<const int32_t> ids, bool special = false) const;

  Kind kind() const;
  int32_t n_vocab() const;
  // Special token ids, or -1 when the vocabulary has none.
  int32_t bos() const;
  int32_t eos() const;
  int32_t eot() const;
  int32_t eom() const;
  int32_t unk() const;
  int32_t pad() const;
  // Fill-in-the-middle tokens (tokenizer.ggml.fim_*_token_id, else found by llama.cpp's texts
  // for the coder families); -1 when absent. pad, rep and sep end generation.
  struct Fim {
    int32_t pre, suf, mid, pad, rep, sep;
  };
  Fim fim() const;
  bool add_bos() const;
  bool add_eos() const;
  // End of generation: eos, eot, eom, and the tokens llama.cpp stops on by their text
  // (<|im_end|>, <|eot_id|>, <|endoftext|>, <end_of_turn>, ...).
  bool is_eog(int32_t id) const;
  // A control / unknown token, rendered only on request.
  bool is_control(int32_t id) const;
  // The id of the token whose stored text is exactly `text`.
  std::optional<int32_t> find_token(std::string_view text) const;
  // The token's text as stored in the vocabulary ("▁Hello", "Ġworld", "<0x0A>").
  const std::string& token_text(int32_t id) const;

 private:
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hart
