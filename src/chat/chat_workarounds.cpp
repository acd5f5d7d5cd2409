#include "chat/chat_workarounds.h"

namespace hart::chat_detail {
namespace {

using json = nlohmann::ordered_json;

bool contains(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

bool is_ministral3(const std::string& s) {
  return contains(s, "[SYSTEM_PROMPT]") && contains(s, "[TOOL_CALLS]") && contains(s, "[ARGS]") && !contains(s, "[CALL_ID]");
}
bool is_harmony(const std::string& s) { return contains(s, "<|channel|>"); }
// LFM2 and LFM2.5 (the later ones dropped the tool-list markers but kept the call markers).
bool is_lfm2(const std::string& s) {
  return (contains(s, "<|tool_list_start|>") && contains(s, "<|tool_list_end|>")) ||
         (contains(s, "<|tool_call_start|>") && contains(s, "<|tool_call_end|>"));
}
// Older Gemma 4 templates read tool results from the assistant turn's tool_responses.
bool is_old_gemma4(const std::string& s) {
  return contains(s, "'<|tool_call>call:'") && !contains(s, "{#- OpenAI Chat Completions:");
}

bool has_tool_calls(const json& m) { return m.contains("tool_calls") && m["tool_calls"].is_array() && !m["tool_calls"].empty(); }

bool has_content(const json& m) {
  if (!m.contains("content")) return false;
  const json& c = m["content"];
  return (c.is_string() && !c.get<std::string>().empty()) || (c.is_array() && !c.empty());
}

// Ministral 3 wants reasoning as a {type: thinking} block and text as {type: text} blocks in
// system and assistant messages.
void ministral_blocks(json& messages) {
  for (auto& m : messages) {
    const std::string role = m.value("role", "");
    if (role != "system" && role != "assistant") continue;
    json blocks = json::array();
    if (m.contains("reasoning_content") && m["reasoning_content"].is_string())
      blocks.push_back(json{{"type", "thinking"}, {"thinking", m["reasoning_content"]}});
    if (m.contains("content")) {
      if (m["content"].is_string()) blocks.push_back(json{{"type", "text"}, {"text", m["content"]}});
      else if (m["content"].is_array())
        for (const auto& b : m["content"]) blocks.push_back(b);
    }
    m["content"] = std::move(blocks);
    m.erase("reasoning_content");
  }
}

// assistant(tool_calls) + tool results (+ the assistant's answer) become one assistant message
// with tool_calls, tool_responses [{name, response}] and content.
void gemma4_tool_responses(json& messages) {
  json out = json::array();
  for (size_t i = 0; i < messages.size();) {
    const json& m = messages[i];
    if (m.value("role", "") != "assistant" || !has_tool_calls(m)) {
      out.push_back(m);
      ++i;
      continue;
    }
    json calls = m["tool_calls"], responses = json::array(), content, reasoning;
    if (m.contains("reasoning_content") && m["reasoning_content"].is_string()) reasoning = m["reasoning_content"];
    for (++i; i < messages.size() && messages[i].value("role", "") == "tool"; ++i) {
      const json& t = messages[i];
      json response;
      if (t.contains("content")) {
        response = t["content"];
        if (response.is_string()) {
          // Results that are JSON text are passed as values.
          json parsed = json::parse(response.get<std::string>(), nullptr, false);
          if (!parsed.is_discarded()) response = std::move(parsed);
        }
      }
      std::string name;
      if (responses.size() < calls.size() && calls[responses.size()].contains("function"))
        name = calls[responses.size()]["function"].value("name", "");
      if (name.empty()) name = t.value("tool_call_id", "");
      responses.push_back(json{{"name", name}, {"response", response}});
    }
    if (i < messages.size() && messages[i].value("role", "") == "assistant" && !has_tool_calls(messages[i]) &&
        has_content(messages[i]))
      content = messages[i++]["content"];
    json merged{{"role", "assistant"}, {"tool_calls", calls}};
    if (!responses.empty()) merged["tool_responses"] = responses;
    if (!content.is_null()) merged["content"] = content;
    if (!reasoning.is_null()) merged["reasoning_content"] = reasoning;
    out.push_back(std::move(merged));
  }
  messages = std::move(out);
}

}  // namespace

void adjust_messages_for_template(const std::string& source, json& messages) {
  if (is_ministral3(source)) ministral_blocks(messages);
  if (is_harmony(source))
    for (auto& m : messages)  // gpt-oss reads the reasoning of tool-calling turns as `thinking`
      if (m.contains("reasoning_content") && has_tool_calls(m)) m["thinking"] = m["reasoning_content"];
  if (is_lfm2(source))
    for (auto& m : messages)  // LFM2 reads reasoning as `thinking`
      if (m.contains("reasoning_content")) m["thinking"] = m["reasoning_content"];
  if (is_old_gemma4(source)) gemma4_tool_responses(messages);
}

void adjust_prompt_for_template(const std::string& source, bool add_generation_prompt, std::string& prompt) {
  // Gemma 4 ends a turn that has tool calls and their results without opening the model's
  // next turn; llama.cpp opens it.
  static const std::string kTurnEnd = "<turn|>\n";
  if (contains(source, "'<|tool_call>call:'") && add_generation_prompt && prompt.size() >= kTurnEnd.size() &&
      prompt.compare(prompt.size() - kTurnEnd.size(), kTurnEnd.size(), kTurnEnd) == 0)
    prompt += "<|turn>model\n";
}

}  // namespace hart::chat_detail
