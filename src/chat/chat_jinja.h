// Chat prompts from a GGUF's own Jinja template (tokenizer.chat_template), rendered the way
// llama-server renders them (common_chat_templates_apply with --jinja): the messages are put in
// llama.cpp's shape first (key order, empty content as "", arguments as strings), then adjusted
// to what the template can take (its capabilities, probed by rendering sample conversations),
// and the context gets bos_token, eos_token, enable_thinking, tools, datetime, date_string,
// chat_template_kwargs and add_generation_prompt.
#pragma once

#include <ctime>
#include <nlohmann/json.hpp>
#include <string>

#include "chat/jinja/template.h"

namespace hart {

// What a template does with its inputs (llama.cpp's jinja::caps).
struct ChatTemplateCaps {
  bool system_role = true;       // renders a system message (else it is merged into the next one)
  bool tools = true;             // describes the request's tools in the prompt
  bool tool_calls = true;        // renders assistant tool_calls
  bool tool_responses = true;    // renders the content of tool messages
  bool object_arguments = false; // wants tool-call arguments as objects, not JSON text
  bool string_content = true;    // takes content as a string
  bool typed_content = false;    // takes content as a list of {type, text} parts
};

struct ChatTemplateInputs {
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();  // OpenAI chat messages
  nlohmann::ordered_json tools;                                       // null or OpenAI tools
  bool add_generation_prompt = true;
  bool enable_thinking = true;
  nlohmann::ordered_json kwargs = nlohmann::ordered_json::object();  // chat_template_kwargs
  std::tm now{};  // for strftime_now(), datetime and date_string
};

class JinjaChatTemplate {
 public:
  // Applies llama.cpp's source patches, parses (hart::Error on a syntax error) and probes the
  // template's capabilities.
  JinjaChatTemplate(std::string source, std::string bos_token, std::string eos_token);
  // With capabilities already known (tests compare against llama.cpp's).
  JinjaChatTemplate(std::string source, std::string bos_token, std::string eos_token, ChatTemplateCaps caps);

  // Throws jinja::RaisedError with the template's message for raise_exception, hart::Error for
  // malformed messages or any other failure.
  std::string apply(const ChatTemplateInputs& in) const;

  const ChatTemplateCaps& caps() const { return caps_; }
  const std::string& source() const { return source_; }
  const std::string& bos_token() const { return bos_; }
  const std::string& eos_token() const { return eos_; }

 private:
  std::string source_;
  std::string bos_, eos_;
  jinja::Template tmpl_;
  ChatTemplateCaps caps_;
};

// The two source patches llama.cpp applies before parsing (gpt-oss and Mistral [TOOL_CALLS]
// templates reject assistant turns llama.cpp produces).
std::string patch_chat_template_source(std::string source);

// Renders probe conversations to find what the template supports.
ChatTemplateCaps detect_chat_template_caps(const jinja::Template& t);

// The current local time, as llama-server gives templates (strftime_now, the date variables);
// with SOURCE_DATE_EPOCH set (seconds since 1970, the reproducible-builds convention) that
// instant in UTC instead, so a template that prints the date renders the same on any day (a
// test that asks twice and compares must not see midnight pass between the two). A value that
// is not a whole number of seconds throws hart::Error.
std::tm local_now();

}  // namespace hart
