// Chat templates: turning a conversation into the prompt text a chat model was trained on.
//
// These are llama.cpp's built-in (non-Jinja) templates: the same names, the same detection from
// the GGUF's tokenizer.chat_template text, and byte-for-byte the same output. The BOS token is
// not part of the text; the tokenizer adds it when the model's add_bos says so.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hart {

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

enum class ChatTemplate {
  CHATML,  // also SmolLM2, Qwen2, Qwen2.5, Qwen3
  LLAMA2,
  LLAMA2_SYS,
  LLAMA2_SYS_BOS,
  LLAMA2_SYS_STRIP,
  MISTRAL_V1,
  MISTRAL_V3,
  MISTRAL_V3_TEKKEN,
  MISTRAL_V7,
  MISTRAL_V7_TEKKEN,
  PHI3,
  PHI4,
  FALCON3,
  ZEPHYR,
  GEMMA,
  ORION,
  OPENCHAT,
  VICUNA,
  VICUNA_ORCA,
  DEEPSEEK,
  DEEPSEEK2,
  DEEPSEEK3,
  COMMAND_R,
  LLAMA3,
  LLAMA4,
  CHATGLM3,
  CHATGLM4,
  GLMEDGE,
  EXAONE3,
  MEGREZ,
  BAILING,
  SMOLVLM,
  DOTS1,
};

// Recognizes a template family from characteristic substrings of its Jinja text (or from a
// template name, as llama.cpp also accepts). nullopt when no supported family matches.
std::optional<ChatTemplate> detect_chat_template(std::string_view jinja);

// Throws hart::Error listing the known names when `name` is not one of them.
ChatTemplate chat_template_from_name(std::string_view name);
std::string chat_template_name(ChatTemplate t);
std::vector<std::string> chat_template_names();

// Renders the conversation; add_generation_prompt appends the opening of an assistant turn
// (for the templates that have one). Throws hart::Error for a role other than
// system/user/assistant.
std::string apply_chat_template(ChatTemplate t, std::span<const ChatMessage> messages,
                                bool add_generation_prompt);

}  // namespace hart
