#include "lib/chat_template.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "common/error.h"

namespace hart {

std::optional<std::string> gguf_chat_template(const gguf::File& file, const std::string& name) {
  return file.get_string(name.empty() ? std::string("tokenizer.chat_template") : "tokenizer.chat_template." + name);
}

std::string token_text(const Tokenizer& tok, int32_t id) { return id < 0 ? "" : tok.token_to_piece(id, true); }

std::string read_text_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("cannot read " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

ChatFormatter choose_chat_formatter(const gguf::File* file, const Tokenizer& tok, const ChatTemplateChoice& o,
                                    std::optional<ChatTemplate> fallback) {
  if (!o.builtin.empty()) return ChatFormatter(chat_template_from_name(o.builtin));
  std::optional<std::string> text, tool_use;
  std::string origin;
  if (!o.file.empty()) {
    text = read_text_file(o.file);
    origin = o.file;
  } else if (file) {
    text = gguf_chat_template(*file);
    tool_use = gguf_chat_template(*file, "tool_use");
    if (!text) std::swap(text, tool_use);  // only a tool_use template: it is the template
    origin = "the model's tokenizer.chat_template";
  }
  if (text) {
    const auto make = [&](const std::string& src) {
      return std::make_shared<const JinjaChatTemplate>(src, token_text(tok, tok.bos()), token_text(tok, tok.eos()));
    };
    try {
      std::shared_ptr<const JinjaChatTemplate> variant;
      if (tool_use) {
        try {
          variant = make(*tool_use);
        } catch (const Error& e) {  // as llama.cpp: a broken variant is ignored
          std::fprintf(stderr, "hart: tokenizer.chat_template.tool_use does not parse (%s): not used\n", e.what());
        }
      }
      return ChatFormatter(make(*text), tok.add_bos(), tok.add_eos(), std::move(variant));
    } catch (const Error& e) {
      if (!o.file.empty()) throw Error(o.file + ": " + e.what());
      // A template the engine cannot parse: the built-in family it resembles, if any.
      std::fprintf(stderr, "hart: %s does not parse (%s)\n", origin.c_str(), e.what());
      if (auto family = detect_chat_template(*text)) return ChatFormatter(*family);
    }
  }
  if (!fallback) throw Error("the model has no usable tokenizer.chat_template: choose one with --chat-template or --chat-template-file");
  return ChatFormatter(*fallback);
}

}  // namespace hart
