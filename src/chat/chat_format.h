// Internal: the data that describes one chat template. Every supported template is an instance
// of this one description, rendered by one function (apply_chat_template).
#pragma once

#include <array>
#include <string>

#include "chat/chat.h"

namespace hart::chat_detail {

enum Role { kSystem = 0, kUser = 1, kAssistant = 2 };

struct RoleFormat {
  std::string prefix;   // before the content
  std::string suffix;   // after the content
  bool trim = false;    // strip ASCII whitespace from both ends of the content
};

struct ChatFormat {
  ChatTemplate id = ChatTemplate::CHATML;
  std::string name;
  std::string preamble;  // once, before everything
  std::array<RoleFormat, 3> roles;  // indexed by Role
  std::string generation_prompt;    // opens an assistant turn; empty for some templates
  // Instruction-turn templates ("[INST] ... [/INST] answer</s>"): before a message, when no turn
  // is open, the turn opener is written; an assistant message closes the turn. Empty: no turns.
  std::string turn_open;         // the first turn
  std::string turn_reopen;       // every later turn
  bool first_turn_open_at_start = false;  // llama2 writes its opener even before an empty chat
  // Templates without a system role: system text is gathered and written at the start of the
  // next user message, followed by a blank line.
  bool system_folds_into_user = false;
};

const ChatFormat& chat_format(ChatTemplate t);
const std::array<ChatFormat, 33>& all_chat_formats();

}  // namespace hart::chat_detail
