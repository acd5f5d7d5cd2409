// Renders a conversation with a template description (see chat_format.h).
#include <string>

#include "chat/chat_format.h"
#include "common/error.h"

namespace hart {

namespace {

using chat_detail::ChatFormat;
using chat_detail::Role;

Role parse_role(const std::string& role) {
  if (role == "system") return chat_detail::kSystem;
  if (role == "user") return chat_detail::kUser;
  if (role == "assistant") return chat_detail::kAssistant;
  throw Error("chat message has unknown role '" + role + "' (expected system, user or assistant)");
}

// C's isspace() in the "C" locale.
bool is_c_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && is_c_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_c_space(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

std::string apply_chat_template(ChatTemplate t, std::span<const ChatMessage> messages,
                                bool add_generation_prompt) {
  const ChatFormat& f = chat_detail::chat_format(t);
  const bool has_turns = !f.turn_open.empty();

  std::string out = f.preamble;
  bool in_turn = false;
  bool opened_before = false;
  auto open_turn = [&] {
    out += opened_before ? f.turn_reopen : f.turn_open;
    in_turn = opened_before = true;
  };
  if (has_turns && f.first_turn_open_at_start) open_turn();

  std::string pending_system;  // for templates without a system role
  for (const ChatMessage& m : messages) {
    const Role role = parse_role(m.role);
    const auto& rf = f.roles[role];
    const std::string_view content = rf.trim ? trimmed(m.content) : std::string_view(m.content);
    if (f.system_folds_into_user && role == chat_detail::kSystem) {
      pending_system += content;
      continue;
    }
    if (has_turns && !in_turn) open_turn();
    out += rf.prefix;
    if (role == chat_detail::kUser && !pending_system.empty()) {
      out += pending_system;
      out += "\n\n";
      pending_system.clear();
    }
    out += content;
    out += rf.suffix;
    if (role == chat_detail::kAssistant) in_turn = false;
  }
  if (add_generation_prompt) out += f.generation_prompt;
  return out;
}

}  // namespace hart
