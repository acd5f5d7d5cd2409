#include "tokenizer/pretokenizer.h"

#include <algorithm>
#include <initializer_list>

#include "common/error.h"
#include "tokenizer/utf8.h"

namespace hart::tok {

namespace {

// The patterns below come from the models' tokenizer.json files (as adapted by llama.cpp:
// `(?i:'s|...)` spelled out case by case).
constexpr std::string_view kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
constexpr std::string_view kLlama3 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// Qwen 3.5: Qwen2's pattern with combining marks (\p{M}) counted as part of letter runs.
constexpr std::string_view kQwen35 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kCjk = "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+";
constexpr std::string_view kDeepseekLatin =
    "\\s?[A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-"
    "\u02af\u0370-\u0373\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1"
    "\u03a3-\u03f5\u03f7-\u0481\u048a-\u052f\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-"
    "\u13fd\u1c90-\u1cba\u1cbd-\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77\u1d79-\u1d9a\u1e00-\u1f15"
    "\u1f18-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d\u1f50-\u1f57\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d"
    "\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb"
    "\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc\u2102\u2107\u210a-\u2113\u2115\u2119-\u211d"
    "\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139\u213c-\u213f\u2145-\u2149\u214e"
    "\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3\ua640-\ua66d\ua680-"
    "\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17"
    "\uff21-\uff3a\uff41-\uff5a\U00010400-\U0001044f\U000104b0-\U000104d3\U000104d8-"
    "\U000104fb\U00010c80-\U00010cb2\U00010cc0-\U00010cf2\U000118a0-\U000118df\U0001e900-"
    "\U0001e943]+";
constexpr std::string_view kDeepseekPunct =
    "\\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+";

struct Family {
  std::initializer_list<std::string_view> names;
  std::initializer_list<std::string_view> regexes;
  PreTokenizerTraits traits;
};

const Family kFamilies[] = {
    {{"", "default"}, {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"}, {}},
    {{"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2"},
     {kLlama3},
     {.ignore_merges = true, .add_bos = true}},
    {{"dbrx", "smaug-bpe"}, {kLlama3}, {}},
    {{"qwen2", "deepseek-r1-qwen", "stablelm2", "hunyuan", "megrez"}, {kQwen2}, {}},
    {{"qwen35"}, {kQwen35}, {}},
    // Gemma 4 runs its merges over whole lines: only newline runs are split off.
    {{"gemma4"},
     {R"([^\n]+|\n+)"},
     {.add_bos = true, .force_add_bos = true, .sentencepiece_style = true, .whole_newline_runs = true}},
    {{"gpt-2", "phi-2", "mpt", "olmo", "jais", "exaone4", "gigachat"}, {kGpt2}, {}},
    {{"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b"},
     {R"(\p{N})", kGpt2},
     {}},
    {{"falcon"}, {R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2, "[0-9][0-9][0-9]"}, {}},
    {{"deepseek-llm"},
     {R"([\r\n])", kDeepseekLatin, kDeepseekPunct, R"(\s+$)", kCjk, R"(\p{N}+)"},
     {}},
    {{"deepseek-coder"}, {R"([\r\n])", R"(\s?\p{L}+)", R"(\s?\p{P}+)", kCjk, R"(\p{N})"}, {}},
};

// PCRE2's \s is \p{Z} plus \t\n\v\f\r; the tokenizers' reference (Unicode White_Space, as in
// HF tokenizers and llama.cpp) also counts U+0085 NEXT LINE. Add it to every \s and \S.
std::string widen_whitespace(std::string_view pattern) {
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char e = pattern[++i];
      if (e == 's')
        out += in_class ? R"(\s\x{85})" : R"([\s\x{85}])";
      else if (e == 'S' && !in_class)
        out += R"([^\s\x{85}])";
      else
        (out += '\\') += e;
      continue;
    }
    if (c == '[') in_class = true;
    if (c == ']') in_class = false;
    out += c;
  }
  return out;
}

const Family& family(std::string_view name) {
  for (const Family& f : kFamilies)
    if (std::find(f.names.begin(), f.names.end(), name) != f.names.end()) return f;
  throw Error("unsupported pre-tokenizer '" + std::string(name) + "' (tokenizer.ggml.pre)");
}

}  // namespace

PreTokenizerTraits pre_tokenizer_traits(std::string_view name) { return family(name).traits; }

PreTokenizer::PreTokenizer(std::string_view name) {
  const Family& f = family(name);
  for (std::string_view re : f.regexes) regexes_.emplace_back(widen_whitespace(re));
}

std::vector<std::string_view> PreTokenizer::split(std::string_view text) const {
  std::vector<std::string_view> pieces;
  if (!text.empty()) pieces.push_back(text);
  std::vector<std::string_view> next;
  for (const Regex& re : regexes_) {
    next.clear();
    for (std::string_view piece : pieces) {
      size_t done = 0;  // end of the last emitted part of `piece`
      for (size_t from = 0; from < piece.size();) {
        const auto m = re.find(piece, from);
        if (!m) break;
        if (m->end == m->begin) {  // an empty match consumes nothing: look one character further
          if (m->end == piece.size()) break;
          from = m->end + utf8_seq_len(static_cast<uint8_t>(piece[m->end]));
          continue;
        }
        if (m->begin > done) next.push_back(piece.substr(done, m->begin - done));
        next.push_back(piece.substr(m->begin, m->end - m->begin));
        done = from = m->end;
      }
      if (done < piece.size()) next.push_back(piece.substr(done));
    }
    pieces.swap(next);
  }
  return pieces;
}

}  // namespace hart::tok
