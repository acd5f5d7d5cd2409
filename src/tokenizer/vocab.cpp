#include "tokenizer/vocab.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <optional>
#include <span>
#include <variant>

#include "common/error.h"
#include "gguf/gguf.h"
#include "tokenizer/pretokenizer.h"

namespace hart::tok {

namespace {

// GGUF token types (llama.cpp's llama_token_type) and the attribute each one stands for.
uint32_t attr_of_type(int64_t type) {
  switch (type) {
    case 1: return kAttrNormal;
    case 2: return kAttrUnknown;
    case 3: return kAttrControl;
    case 4: return kAttrUserDefined;
    case 5: return kAttrUnused;
    case 6: return kAttrByte;
    default: return 0;  // undefined
  }
}

// Tokens llama.cpp ends generation on, recognised by their text.
constexpr std::array<std::string_view, 23> kEogTexts = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|eom_id|>",
    "<EOT>", "_<EOT>", "<|end_of_text|>", "<end_of_utterance>",
    "<turn|>", "<|tool_response>",  // Gemma 4: end of turn; a tool's reply comes next
    // fill-in-the-middle pad / repo / file separators
    "<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "<|fim_repo|>", "<|repo_name|>",
    "<fim-repo>", "<REPO>", "<reponame>", "<|file_sep|>", "<eos>"};

std::string name_of(const gguf::File& file) { return file.path().empty() ? "<memory>" : file.path(); }

struct Defaults {
  int32_t bos, eos, unk, sep, pad, mask;
  bool add_bos, add_space_prefix;
};

Defaults defaults_for(const Vocab& v) {
  switch (v.kind) {
    case VocabKind::Spm: return {1, 2, 0, kNoToken, kNoToken, kNoToken, true, true};
    case VocabKind::Wpm: return {101, kNoToken, 100, 102, 0, 103, true, false};
    case VocabKind::Bpe: break;
    case VocabKind::Rwkv: return {kNoToken, kNoToken, kNoToken, kNoToken, kNoToken, kNoToken, false, false};
  }
  return {kNoToken, kNoToken, kNoToken, kNoToken, kNoToken, kNoToken, v.pre_traits.add_bos, false};
}

VocabKind kind_of(const std::string& model, const std::string& where) {
  if (model == "llama") return VocabKind::Spm;
  if (model == "gpt2" || model == "gemma4") return VocabKind::Bpe;
  if (model == "bert") return VocabKind::Wpm;
  if (model == "rwkv") return VocabKind::Rwkv;
  if (model == "none" || model == "no_vocab")
    throw Error(where + ": the file has no vocabulary (tokenizer.ggml.model = '" + model + "')");
  throw Error(where + ": unsupported tokenizer model '" + model + "' (tokenizer.ggml.model)");
}

// Scores are float32, or int32 in some converted files.
std::optional<std::vector<float>> read_scores(const gguf::File& file) {
  constexpr std::string_view kKey = "tokenizer.ggml.scores";
  const gguf::Value* value = file.find(kKey);
  const auto* array = value ? std::get_if<std::shared_ptr<gguf::Array>>(value) : nullptr;
  if (!array || !*array || (*array)->elem_type != gguf::ValueType::INT32) return file.get_float_array(kKey);
  const auto ints = file.get_int_array(kKey);
  return std::vector<float>(ints->begin(), ints->end());
}

void read_tokens(Vocab& v, const gguf::File& file, const std::string& where) {
  auto texts = file.get_string_array("tokenizer.ggml.tokens");
  if (!texts || texts->empty()) throw Error(where + ": tokenizer.ggml.tokens is missing or empty");
  const size_t n = texts->size();
  if (n > static_cast<size_t>(INT32_MAX)) throw Error(where + ": too many tokens");
  const auto scores = read_scores(file);
  const auto types = file.get_int_array("tokenizer.ggml.token_type");
  if (scores && scores->size() < n)
    throw Error(where + ": tokenizer.ggml.scores has " + std::to_string(scores->size()) +
                " entries for " + std::to_string(n) + " tokens");
  if (types && types->size() < n)
    throw Error(where + ": tokenizer.ggml.token_type has " + std::to_string(types->size()) +
                " entries for " + std::to_string(n) + " tokens");

  v.tokens.resize(n);
  v.ids.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    TokenData& t = v.tokens[i];
    t.text = std::move((*texts)[i]);
    if (t.text.empty()) t.text = "[EMPTY_" + std::to_string(i) + "]";
    if (scores) t.score = (*scores)[i];
    if (types) t.attr = attr_of_type((*types)[i]);
    if ((t.attr & kAttrByte) && parse_byte_token(t.text) < 0)
      throw Error(where + ": byte token " + std::to_string(i) + " is '" + t.text + "', not <0xNN>");
    const auto [it, fresh] = v.ids.emplace(t.text, static_cast<int32_t>(i));
    if (!fresh)
      throw Error(where + ": duplicate token '" + t.text + "' (ids " +
                  std::to_string(it->second) + " and " + std::to_string(i) + ")");
    v.max_token_len = std::max(v.max_token_len, t.text.size());
  }
}

// Reads one special token id. A missing key or the "unset" value (-1 / 0xFFFFFFFF) keeps the
// default; any other id outside the vocabulary is an error.
void read_special(int32_t& id, const gguf::File& file, const std::string& key, int32_t n,
                  const std::string& where) {
  if (id >= n) id = kNoToken;  // a default that this small vocabulary does not have
  const auto value = file.get_int(key);
  if (!value || *value == -1 || *value == 0xFFFFFFFF) return;
  if (*value < 0 || *value >= n)
    throw Error(where + ": " + key + " = " + std::to_string(*value) +
                " is out of range (the vocabulary has " + std::to_string(n) + " tokens)");
  id = static_cast<int32_t>(*value);
}

std::string lower_ascii(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// llama.cpp's texts of the FIM tokens of the coder families (Qwen2.5-Coder, CodeLlama, StarCoder
// and Granite, DeepSeek-Coder, CodeGemma, GLM-4.5, Falcon-H1), for files whose metadata names none.
constexpr std::string_view kFimPre[] = {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>",
                                        "<PRE>", "▁<PRE>", "<|code_prefix|>", "<|prefix|>"};
constexpr std::string_view kFimSuf[] = {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>",
                                        "<SUF>", "▁<SUF>", "<|code_suffix|>", "<|suffix|>"};
constexpr std::string_view kFimMid[] = {"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>",
                                        "<MID>", "▁<MID>", "<|code_middle|>", "<|middle|>"};
constexpr std::string_view kFimPad[] = {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"};
constexpr std::string_view kFimRep[] = {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"};
constexpr std::string_view kFimSep[] = {"<|file_sep|>"};

// A FIM token the metadata did not name: the lowest id whose text is one of `texts`, made a
// control token as llama.cpp makes it.
void find_fim(Vocab& v, int32_t& id, std::span<const std::string_view> texts) {
  if (id != kNoToken) return;
  for (int32_t i = 0; i < v.size() && id == kNoToken; ++i)
    if (std::find(texts.begin(), texts.end(), v.tokens[i].text) != texts.end()) id = i;
  if (id != kNoToken) v.tokens[id].attr |= kAttrControl;
}

void mark_fim(Vocab& v, const gguf::File& file, const std::string& where) {
  const int32_t n = v.size();
  const std::pair<int32_t*, const char*> keys[] = {
      {&v.fim_pre, "fim_pre"}, {&v.fim_suf, "fim_suf"}, {&v.fim_mid, "fim_mid"},
      {&v.fim_pad, "fim_pad"}, {&v.fim_rep, "fim_rep"}, {&v.fim_sep, "fim_sep"},
      {&v.fim_pre, "prefix"},  {&v.fim_suf, "suffix"},  {&v.fim_mid, "middle"}};  // older names, which llama.cpp reads too
  for (const auto& [id, name] : keys) read_special(*id, file, std::string("tokenizer.ggml.") + name + "_token_id", n, where);
  find_fim(v, v.fim_pre, kFimPre);
  find_fim(v, v.fim_suf, kFimSuf);
  find_fim(v, v.fim_mid, kFimMid);
  find_fim(v, v.fim_pad, kFimPad);
  find_fim(v, v.fim_rep, kFimRep);
  find_fim(v, v.fim_sep, kFimSep);
}

void mark_specials(Vocab& v, const gguf::File& file) {
  // End of generation: the eos/eot/eom ids plus tokens known by their text (forced to CONTROL
  // so they are never rendered as text, as llama.cpp does).
  v.eog.assign(v.tokens.size(), false);
  for (std::string_view text : kEogTexts) {
    const int32_t id = v.find(text);
    if (id == kNoToken) continue;
    v.eog[id] = true;
    v.tokens[id].attr |= kAttrControl;
  }
  for (int32_t id : {v.eos, v.eot, v.eom, v.fim_pad, v.fim_rep, v.fim_sep})
    if (id != kNoToken) v.eog[id] = true;

  for (int32_t id = 0; id < v.size(); ++id)
    if (v.has(id, kAttrControl | kAttrUserDefined | kAttrUnknown)) v.specials.push_back(id);
  std::stable_sort(v.specials.begin(), v.specials.end(), [&](int32_t a, int32_t b) {
    return v.tokens[a].text.size() > v.tokens[b].text.size();
  });

  // Phi-3 drops the whitespace after its special tokens except <unk>, <s>, <|endoftext|>.
  const std::string name = lower_ascii(file.get_string("general.name").value_or(""));
  if (name.find("phi-3") != std::string::npos || name.find("phi3") != std::string::npos) {
    for (int32_t id : v.specials) v.tokens[id].attr |= kAttrRstrip;
    if (int32_t id = v.find("</s>"); id != kNoToken) v.tokens[id].attr |= kAttrRstrip;
    for (std::string_view text : {"<unk>", "<s>", "<|endoftext|>"})
      if (int32_t id = v.find(text); id != kNoToken) v.tokens[id].attr &= ~kAttrRstrip;
  }
}

}  // namespace

Vocab Vocab::load(const gguf::File& file) {
  const std::string where = name_of(file);
  const auto model = file.get_string("tokenizer.ggml.model");
  if (!model) throw Error(where + ": the file has no vocabulary (no tokenizer.ggml.model)");

  Vocab v;
  v.kind = kind_of(*model, where);
  // The "gemma4" model is BPE with its own pre-tokenizer, whatever tokenizer.ggml.pre says.
  v.pre = *model == "gemma4" ? "gemma4" : file.get_string("tokenizer.ggml.pre").value_or("");
  if (v.kind == VocabKind::Bpe) v.pre_traits = pre_tokenizer_traits(v.pre);
  read_tokens(v, file, where);

  const Defaults d = defaults_for(v);
  v.bos = d.bos, v.eos = d.eos, v.unk = d.unk, v.sep = d.sep, v.pad = d.pad, v.mask = d.mask;
  const int32_t n = v.size();
  read_special(v.bos, file, "tokenizer.ggml.bos_token_id", n, where);
  read_special(v.eos, file, "tokenizer.ggml.eos_token_id", n, where);
  read_special(v.eot, file, "tokenizer.ggml.eot_token_id", n, where);
  read_special(v.eom, file, "tokenizer.ggml.eom_token_id", n, where);
  read_special(v.unk, file, "tokenizer.ggml.unknown_token_id", n, where);
  read_special(v.sep, file, "tokenizer.ggml.seperator_token_id", n, where);
  read_special(v.pad, file, "tokenizer.ggml.padding_token_id", n, where);
  read_special(v.mask, file, "tokenizer.ggml.mask_token_id", n, where);

  v.add_bos = file.get_bool("tokenizer.ggml.add_bos_token").value_or(d.add_bos);
  v.add_eos = file.get_bool("tokenizer.ggml.add_eos_token").value_or(false);
  if (v.pre_traits.force_add_bos) v.add_bos = true;
  // llama.cpp's RWKV tokenizer adds neither BOS nor EOS, whatever the file says.
  if (v.kind == VocabKind::Rwkv) v.add_bos = v.add_eos = false;
  v.add_space_prefix = file.get_bool("tokenizer.ggml.add_space_prefix").value_or(d.add_space_prefix);
  v.lowercase = file.get_bool("tokenizer.ggml.normalizer.lowercase").value_or(true);
  v.strip_accents =
      file.get_bool("tokenizer.ggml.normalizer.strip_accents").value_or(v.lowercase);
  if (v.add_bos && v.bos == kNoToken)
    throw Error(where + ": tokenizer.ggml.add_bos_token is true but there is no BOS token");
  if (v.add_eos && v.eos == kNoToken)
    throw Error(where + ": tokenizer.ggml.add_eos_token is true but there is no EOS token");

  mark_fim(v, file, where);
  mark_specials(v, file);
  return v;
}

int parse_byte_token(std::string_view text) {
  const auto hex = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  if (text.size() != 6 || !text.starts_with("<0x") || text.back() != '>') return -1;
  const int hi = hex(text[3]), lo = hex(text[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

std::string byte_token_text(uint8_t byte) {
  char hex[8];
  std::snprintf(hex, sizeof hex, "<0x%02X>", byte);
  return hex;
}

int32_t Vocab::byte_token(uint8_t byte) const {
  if (const int32_t id = find(byte_token_text(byte)); id != kNoToken) return id;
  return find(std::string_view(reinterpret_cast<const char*>(&byte), 1));
}

}  // namespace hart::tok
