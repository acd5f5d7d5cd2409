// The one way a frontend turns a conversation into prompt text: the model's own Jinja template
// (JinjaChatTemplate, as llama-server renders it), or for a file without one a built-in family
// (apply_chat_template).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "chat/chat.h"
#include "chat/chat_jinja.h"
#include "chat/chat_output.h"
#include "chat/chat_tools_generic.h"

namespace hart {

struct ChatRequest {
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();  // OpenAI chat messages
  nlohmann::ordered_json tools;                                       // null or OpenAI tools
  nlohmann::ordered_json kwargs = nlohmann::ordered_json::object();  // chat_template_kwargs
  bool add_generation_prompt = true;
};

class ChatFormatter {
 public:
  explicit ChatFormatter(ChatTemplate builtin);
  // The tokenizer adds BOS (EOS) itself when the vocabulary says so; then a template's own
  // leading bos_token (trailing eos_token) is cut from the text, as llama.cpp does.
  // `tool_use` (may be null): the file's tokenizer.chat_template.tool_use, which llama.cpp renders
  // requests that carry tools with.
  ChatFormatter(std::shared_ptr<const JinjaChatTemplate> jinja, bool strip_bos, bool strip_eos,
                std::shared_ptr<const JinjaChatTemplate> tool_use = nullptr);

  // Throws hart::Error for a conversation the template cannot render (jinja::RaisedError with
  // the template's own message when it refuses one).
  std::string apply(const ChatRequest& r) const;

  bool is_jinja() const { return jinja_ != nullptr; }
  // How the reply is read: the template family's syntax; with tools and a template whose family
  // hart has no parser for, a syntax derived from the template (DERIVED) or, when it has none
  // (and for the built-in families), llama.cpp's generic JSON format (GENERIC), for which
  // apply() tells the model the tools and the format.
  OutputSyntax output_syntax(bool has_tools) const;
  // "jinja" or the built-in family's name.
  std::string name() const;
  // The Jinja template's text ("" for a built-in family), as llama-server's /props shows it.
  std::string source() const { return jinja_ ? jinja_->source() : ""; }

 private:
  // The tool format of the template requests with tools render with, found once.
  struct ToolSetup {
    OutputSyntax syntax;
    GenericToolNeeds needs;  // GENERIC: what the messages must spell out
    std::string example;     // GENERIC: the call example shown with the tools
  };
  void set_up_tools();
  std::string render(const ChatRequest& r) const;

  std::shared_ptr<const JinjaChatTemplate> jinja_, tool_use_;
  ChatTemplate builtin_ = ChatTemplate::CHATML;
  bool strip_bos_ = false, strip_eos_ = false;
  std::shared_ptr<const ToolSetup> tools_;
};

// The messages as the built-in families take them: system, user and assistant roles
// (developer counts as system), text content (a string or text parts, joined).
std::vector<ChatMessage> plain_chat_messages(const nlohmann::ordered_json& messages);

}  // namespace hart
