// How `hart chat`, `hart serve` and the C API choose the chat template: a built-in family by
// name (--chat-template), else a Jinja file (--chat-template-file), else the GGUF's
// tokenizer.chat_template rendered by the Jinja engine; a file without a template (or with one
// the engine cannot parse, unless it resembles a built-in family) gets the caller's fallback.
#pragma once

#include <optional>
#include <string>

#include "chat/chat_formatter.h"
#include "gguf/gguf.h"
#include "tokenizer/tokenizer.h"

namespace hart {

struct ChatTemplateChoice {
  std::string builtin;  // a built-in family's name, or empty
  std::string file;     // a Jinja template file, or empty
};

// The template text of a GGUF: tokenizer.chat_template, or tokenizer.chat_template.NAME.
std::optional<std::string> gguf_chat_template(const gguf::File& file, const std::string& name = "");

// The BOS / EOS token texts a template sees as bos_token / eos_token ("" when there is none).
std::string token_text(const Tokenizer& tok, int32_t id);

// The formatter for a model (`file` may be null for a model without one). `fallback`: the
// built-in family for a file without a template; nullopt makes that an error.
ChatFormatter choose_chat_formatter(const gguf::File* file, const Tokenizer& tok, const ChatTemplateChoice& o,
                                    std::optional<ChatTemplate> fallback);

std::string read_text_file(const std::string& path);

}  // namespace hart
