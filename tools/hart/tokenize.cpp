// hart tokenize -m MODEL TEXT: the token ids (and pieces) a model's tokenizer makes of TEXT;
// --vectors FILE.inp prints one line of ids per test string, in llama.cpp's .out format, so
// `diff` against NAME.gguf.out checks a vocabulary.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "builtin_model.h"
#include "command.h"
#include "model_options.h"
#include "parse_args.h"
#include "common/error.h"
#include "gguf/gguf.h"
#include "tokenizer/test_vectors.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace hart::cli {
namespace {

struct TokenizeOptions {
  std::string model;
  std::string text;
  std::string vectors;
  bool parse_special = false;
  bool no_bos = false;
  bool ids_only = false;
};

// A piece in quotes, with control characters and bytes that are not valid UTF-8 (part of a
// character split over byte tokens) escaped as \xNN.
std::string shown(std::string_view piece) {
  std::string out = "\"";
  for (size_t pos = 0; pos < piece.size();) {
    const size_t n = tok::valid_utf8_len(piece, pos);
    const auto c = static_cast<unsigned char>(piece[pos]);
    if (n > 1 || (n == 1 && c >= 0x20 && c != 0x7F)) {
      if (c == '"' || c == '\\') out += '\\';
      out.append(piece.substr(pos, n));
      pos += n;
      continue;
    }
    char esc[8];
    std::snprintf(esc, sizeof esc, "\\x%02X", c);
    out += c == '\n' ? "\\n" : esc;
    ++pos;
  }
  return out + '"';
}

void print_tokens(const Tokenizer& tok, const TokenizeOptions& o) {
  const auto ids = tok.encode(o.text, !o.no_bos, o.parse_special);
  if (o.ids_only) {
    std::printf("%s\n", tok::format_ids(ids).c_str() + (ids.empty() ? 0 : 1));
    return;
  }
  for (int32_t id : ids) std::printf("%8d  %s\n", id, shown(tok.token_to_piece(id, true)).c_str());
}

int cmd_tokenize(int argc, char** argv) {
  TokenizeOptions o;
  CLI::App app{"Tokenize text with a model's vocabulary.", "hart tokenize"};
  app.add_option("-m,--model", o.model,
                 std::string("GGUF file, a model or a vocabulary-only file (default: the built-in ") + kBuiltinModelName + ")");
  auto* text = app.add_option("text", o.text, "the text to tokenize");
  auto* vectors = app.add_option("--vectors", o.vectors,
                                 "tokenize every string of a llama.cpp NAME.gguf.inp file (no BOS, "
                                 "specials not parsed), printing lines like NAME.gguf.out");
  text->excludes(vectors);
  app.add_flag("--parse-special", o.parse_special, "texts of control tokens (<|im_start|>) become those tokens");
  app.add_flag("--no-bos", o.no_bos, "do not add BOS/EOS even if the vocabulary asks for them");
  app.add_flag("--ids", o.ids_only, "print only the ids, on one line");
  if (!parse_args(app, argc, argv)) return 0;
  if (!*text && !*vectors) throw Error("give the text to tokenize (or --vectors FILE.inp)");

  const auto file = open_gguf(o.model, gguf::LoadMode::Mmap);
  const auto tok = Tokenizer::from_gguf(*file);
  if (*vectors) {
    for (const std::string& s : tok::read_test_strings(o.vectors))
      std::printf("%s\n", tok::format_ids(tok->encode(s, false, false)).c_str());
  } else {
    print_tokens(*tok, o);
  }
  return 0;
}

}  // namespace

HART_COMMAND(tokenize, "show the tokens a model's tokenizer makes of a text", cmd_tokenize);

}  // namespace hart::cli
