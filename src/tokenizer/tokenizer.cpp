#include "tokenizer/tokenizer.h"

#include "common/error.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/encoder.h"
#include "tokenizer/rwkv.h"
#include "tokenizer/special.h"
#include "tokenizer/utf8.h"
#include "tokenizer/vocab.h"

namespace hart {

using tok::kNoToken;

struct Tokenizer::Impl {
  tok::Vocab vocab;
  std::unique_ptr<tok::Encoder> encoder;

  void check(int32_t id) const {
    if (id < 0 || id >= vocab.size())
      throw Error("token id " + std::to_string(id) + " is out of range (the vocabulary has " +
                  std::to_string(vocab.size()) + " tokens)");
  }
};

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::~Tokenizer() = default;

std::unique_ptr<Tokenizer> Tokenizer::from_gguf(const gguf::File& file) {
  auto impl = std::make_unique<Impl>();
  impl->vocab = tok::Vocab::load(file);
  switch (impl->vocab.kind) {
    case tok::VocabKind::Spm: impl->encoder = tok::make_spm_encoder(impl->vocab); break;
    case tok::VocabKind::Bpe: impl->encoder = tok::make_bpe_encoder(impl->vocab, file); break;
    case tok::VocabKind::Wpm: impl->encoder = tok::make_wpm_encoder(impl->vocab); break;
    case tok::VocabKind::Rwkv: impl->encoder = tok::make_rwkv_encoder(impl->vocab); break;
  }
  return std::unique_ptr<Tokenizer>(new Tokenizer(std::move(impl)));
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special, bool parse_special) const {
  const tok::Vocab& v = impl_->vocab;
  std::vector<int32_t> out;
  if (add_special && v.add_bos) out.push_back(v.bos);
  bool after_special = true;
  for (const tok::Fragment& f : tok::split_special(text, v, parse_special)) {
    if (f.token != kNoToken) {
      out.push_back(f.token);
      after_special = true;
    } else {
      impl_->encoder->encode(f.text, after_special, out);
      after_special = false;
    }
  }
  if (add_special && v.add_eos) out.push_back(v.eos);
  if (add_special && v.kind == tok::VocabKind::Wpm && v.sep != kNoToken) out.push_back(v.sep);
  return out;
}

namespace {

// Byte-level symbols back to bytes. A code point outside the alphabet (an added token stored
// as plain text) is kept as it is.
std::string byte_level_decode(std::string_view text) {
  std::string out;
  for (size_t pos = 0; pos < text.size();) {
    const size_t start = pos;
    const int b = tok::symbol_to_byte(tok::next_code_point(text, pos));
    if (b >= 0)
      out += static_cast<char>(b);
    else
      out.append(text.substr(start, pos - start));
  }
  return out;
}

}  // namespace

std::string Tokenizer::token_to_piece(int32_t id, bool special) const {
  impl_->check(id);
  const tok::Vocab& v = impl_->vocab;
  const tok::TokenData& t = v.tokens[id];
  const bool hidden = (t.attr & (tok::kAttrControl | tok::kAttrUnknown)) != 0;
  if (hidden && !special) return "";
  // RWKV texts stand for their bytes whatever the token's type (unused ones included).
  if (v.kind == tok::VocabKind::Rwkv) return tok::unescape_rwkv_token(t.text);
  if (hidden || (t.attr & tok::kAttrUserDefined)) return t.text;
  if (t.attr & tok::kAttrByte) return std::string(1, static_cast<char>(tok::parse_byte_token(t.text)));
  if (t.attr & tok::kAttrNormal) {
    const bool byte_level = v.kind == tok::VocabKind::Bpe && !v.pre_traits.sentencepiece_style;
    return byte_level ? byte_level_decode(t.text) : tok::replace_all(t.text, tok::kSpaceMarker, " ");
  }
  return "";  // unused / undefined tokens have no text
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool special) const {
  std::string out;
  bool strip_space = impl_->vocab.add_space_prefix;
  for (int32_t id : ids) {
    std::string piece = token_to_piece(id, special);
    if (strip_space && !piece.empty() && piece.front() == ' ') piece.erase(0, 1);
    strip_space = false;
    out += piece;
  }
  return out;
}

Tokenizer::Kind Tokenizer::kind() const {
  switch (impl_->vocab.kind) {
    case tok::VocabKind::Spm: return Kind::Spm;
    case tok::VocabKind::Bpe: return Kind::Bpe;
    case tok::VocabKind::Wpm: return Kind::Wpm;
    case tok::VocabKind::Rwkv: break;
  }
  return Kind::Rwkv;
}

int32_t Tokenizer::n_vocab() const { return impl_->vocab.size(); }
int32_t Tokenizer::bos() const { return impl_->vocab.bos; }
int32_t Tokenizer::eos() const { return impl_->vocab.eos; }
int32_t Tokenizer::eot() const { return impl_->vocab.eot; }
int32_t Tokenizer::eom() const { return impl_->vocab.eom; }
int32_t Tokenizer::unk() const { return impl_->vocab.unk; }
int32_t Tokenizer::pad() const { return impl_->vocab.pad; }
Tokenizer::Fim Tokenizer::fim() const {
  const tok::Vocab& v = impl_->vocab;
  return {v.fim_pre, v.fim_suf, v.fim_mid, v.fim_pad, v.fim_rep, v.fim_sep};
}
bool Tokenizer::add_bos() const { return impl_->vocab.add_bos; }
bool Tokenizer::add_eos() const { return impl_->vocab.add_eos; }

bool Tokenizer::is_eog(int32_t id) const {
  return id >= 0 && id < impl_->vocab.size() && impl_->vocab.eog[id];
}

bool Tokenizer::is_control(int32_t id) const {
  impl_->check(id);
  return impl_->vocab.has(id, tok::kAttrControl | tok::kAttrUnknown);
}

std::optional<int32_t> Tokenizer::find_token(std::string_view text) const {
  const int32_t id = impl_->vocab.find(text);
  return id == kNoToken ? std::nullopt : std::optional<int32_t>(id);
}

const std::string& Tokenizer::token_text(int32_t id) const {
  impl_->check(id);
  return impl_->vocab.tokens[id].text;
}

}  // namespace hart
