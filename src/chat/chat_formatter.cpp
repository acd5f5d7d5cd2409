#include "chat/chat_formatter.h"

#include "common/error.h"

namespace hart {

ChatFormatter::ChatFormatter(ChatTemplate builtin) : builtin_(builtin) {}

ChatFormatter::ChatFormatter(std::shared_ptr<const JinjaChatTemplate> jinja, bool strip_bos, bool strip_eos,
                             std::shared_ptr<const JinjaChatTemplate> tool_use)
    : jinja_(std::move(jinja)), tool_use_(std::move(tool_use)), strip_bos_(strip_bos), strip_eos_(strip_eos) {}

std::string ChatFormatter::template_source(bool has_tools) const {
  if (!jinja_) return "";
  return (has_tools && tool_use_ ? *tool_use_ : *jinja_).source();
}

std::string ChatFormatter::name() const { return jinja_ ? "jinja" : chat_template_name(builtin_); }

std::vector<ChatMessage> plain_chat_messages(const nlohmann::ordered_json& messages) {
  if (!messages.is_array()) throw Error("messages must be a list");
  std::vector<ChatMessage> out;
  for (size_t i = 0; i < messages.size(); ++i) {
    const auto& m = messages[i];
    const std::string where = "messages[" + std::to_string(i) + "]";
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) throw Error(where + " needs a string 'role'");
    std::string role = m["role"].get<std::string>();
    if (role == "developer") role = "system";
    if (role != "system" && role != "user" && role != "assistant")
      throw Error(where + ".role '" + role + "' is not system, user or assistant");
    const auto content = m.value("content", nlohmann::ordered_json(""));
    std::string text;
    if (content.is_string()) {
      text = content.get<std::string>();
    } else if (content.is_array()) {
      for (const auto& part : content) {
        // Each field's type is checked before it is read (value("type", "") throws on a number).
        const auto is_string_field = [&](const char* k) { return part.contains(k) && part[k].is_string(); };
        if (!part.is_object() || !is_string_field("type") || part["type"] != "text" || !is_string_field("text"))
          throw Error(where + ".content: only text parts are supported");
        text += part["text"].get<std::string>();
      }
    } else if (!content.is_null()) {
      throw Error(where + ".content must be a string or an array of parts");
    }
    out.push_back({role, text});
  }
  return out;
}

std::string ChatFormatter::apply(const ChatRequest& r) const {
  if (!jinja_) return apply_chat_template(builtin_, plain_chat_messages(r.messages), r.add_generation_prompt);
  ChatTemplateInputs in;
  in.messages = r.messages;
  in.tools = r.tools;
  in.add_generation_prompt = r.add_generation_prompt;
  in.kwargs = r.kwargs;
  in.now = local_now();
  const bool has_tools = r.tools.is_array() && !r.tools.empty();
  const JinjaChatTemplate& t = has_tools && tool_use_ ? *tool_use_ : *jinja_;
  std::string prompt = t.apply(in);
  const std::string& bos = t.bos_token();
  const std::string& eos = t.eos_token();
  if (strip_bos_ && !bos.empty() && prompt.compare(0, bos.size(), bos) == 0) prompt.erase(0, bos.size());
  if (strip_eos_ && !eos.empty() && prompt.size() >= eos.size() &&
      prompt.compare(prompt.size() - eos.size(), eos.size(), eos) == 0)
    prompt.erase(prompt.size() - eos.size());
  return prompt;
}

}  // namespace hart
