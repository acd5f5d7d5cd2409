// The chat-template flags of `hart chat` and `hart serve` (--chat-template, --chat-template-file);
// the choice they make is lib/chat_template.h's.
#pragma once

#include <CLI/CLI.hpp>

#include "lib/chat_template.h"

namespace hart::cli {

struct ChatTemplateOptions : ChatTemplateChoice {
  void add_to(CLI::App& app);
};

}  // namespace hart::cli
