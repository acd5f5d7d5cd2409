// Chat templates on arbitrary conversations and template texts.
// An input holding "{{" or "{%" is a Jinja template: it is parsed, probed and rendered with one
// of four conversations (plain, multi-turn, tool call, reasoning) by the Jinja engine; checked:
// only hart::Error escapes (no crash, hang or other exception), the output stays bounded.
// Any other input (FuzzedDataProvider): a template name (a known one or random text), messages
// with known or random roles and random contents, and a Jinja text for detect_chat_template.
// Checked: known roles render (unknown ones are a hart::Error), every user message's trimmed
// content appears in the prompt, and detected / named templates round-trip through their names.
#include <fuzzer/FuzzedDataProvider.h>

#include <string>
#include <string_view>
#include <vector>

#include "chat/chat.h"
#include "chat/chat_jinja.h"
#include "common/error.h"

using namespace hart;

namespace {

std::string trimmed(const std::string& s) {
  const char* ws = " \t\n\v\f\r";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

void check_name_round_trip(ChatTemplate t) {
  if (chat_template_from_name(chat_template_name(t)) != t) __builtin_trap();
}

using json = nlohmann::ordered_json;

json conversation(size_t which) {
  json user = {{"role", "user"}, {"content", "What is the weather in Paris?"}};
  json answer = {{"role", "assistant"}, {"content", "Sunny."}};
  switch (which % 4) {
    case 0: return json::array({{{"role", "system"}, {"content", "Be brief."}}, user});
    case 1: return json::array({user, answer, {{"role", "user"}, {"content", "And tomorrow?"}}});
    case 2: {
      json call = {{"id", "call00001"}, {"type", "function"},
                   {"function", {{"name", "get_weather"}, {"arguments", "{\"city\": \"Paris\"}"}}}};
      return json::array({user, {{"role", "assistant"}, {"content", ""}, {"tool_calls", json::array({call})}},
                          {{"role", "tool"}, {"tool_call_id", "call00001"}, {"content", "18 C"}}});
    }
    default:
      answer["reasoning_content"] = "Look it up.";
      const json parts = json::array({{{"type", "text"}, {"text", "Thanks"}}});
      return json::array({user, answer, {{"role", "user"}, {"content", parts}}});
  }
}

void fuzz_jinja(const std::string& text, size_t which) {
  try {
    const JinjaChatTemplate t(text, "<s>", "</s>");
    ChatTemplateInputs in;
    in.messages = conversation(which);
    if (which % 4 == 2)
      in.tools = json::parse(R"([{"type": "function", "function": {"name": "get_weather", "description": "Weather.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}])");
    in.add_generation_prompt = which % 8 < 4;
    in.kwargs = {{"preserve_reasoning", which % 3 == 0}};
    const std::string out = t.apply(in);
    if (out.size() > (64u << 20)) __builtin_trap();
  } catch (const Error&) {
    // bad templates and refused conversations are errors, not crashes
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view whole(reinterpret_cast<const char*>(data), size);
  if (whole.find("{{") != std::string_view::npos || whole.find("{%") != std::string_view::npos) {
    fuzz_jinja(std::string(whole), size);
    return 0;
  }
  static const std::vector<std::string> names = chat_template_names();
  static const char* const kRoles[] = {"system", "user", "assistant"};
  FuzzedDataProvider in(data, size);

  ChatTemplate t;
  if (in.ConsumeBool()) {
    t = chat_template_from_name(names[in.ConsumeIntegralInRange<size_t>(0, names.size() - 1)]);
  } else {
    try {
      t = chat_template_from_name(in.ConsumeRandomLengthString(32));
    } catch (const Error&) {
      t = ChatTemplate::CHATML;
    }
  }
  check_name_round_trip(t);

  std::vector<ChatMessage> messages(in.ConsumeIntegralInRange<size_t>(0, 8));
  bool unknown_role = false;
  for (ChatMessage& m : messages) {
    if (in.ConsumeIntegralInRange<int>(0, 15) == 0) {
      m.role = in.ConsumeRandomLengthString(12);
      unknown_role |= m.role != "system" && m.role != "user" && m.role != "assistant";
    } else {
      m.role = in.PickValueInArray(kRoles);
    }
    m.content = in.ConsumeRandomLengthString(256);
  }
  const bool add_generation_prompt = in.ConsumeBool();
  try {
    const std::string prompt = apply_chat_template(t, messages, add_generation_prompt);
    if (unknown_role) __builtin_trap();
    for (const ChatMessage& m : messages) {
      if (m.role == "user" && prompt.find(trimmed(m.content)) == std::string::npos) __builtin_trap();
    }
  } catch (const Error&) {
    if (!unknown_role) __builtin_trap();
  }

  if (const auto detected = detect_chat_template(in.ConsumeRemainingBytesAsString())) {
    check_name_round_trip(*detected);
  }
  return 0;
}
