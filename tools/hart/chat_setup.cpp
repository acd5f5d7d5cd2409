#include "chat_setup.h"

namespace hart::cli {

void ChatTemplateOptions::add_to(CLI::App& app) {
  app.add_option("--chat-template", builtin, "a built-in template family, instead of the model's Jinja template")
      ->check(CLI::IsMember(chat_template_names()));
  app.add_option("--chat-template-file", file, "a Jinja chat template file, instead of the model's")
      ->check(CLI::ExistingFile)
      ->excludes("--chat-template");
}

}  // namespace hart::cli
