// Template detection from the Jinja text, by the characteristic substrings llama.cpp's
// llm_chat_detect_template looks for, tried in the same order (the first match wins).
#include <initializer_list>
#include <optional>
#include <string_view>
#include <vector>

#include "chat/chat_format.h"

namespace hart {

namespace {

using T = ChatTemplate;
using Clause = std::vector<std::string_view>;  // satisfied when the text contains any of these

struct Rule {
  std::vector<Clause> all;  // every clause must be satisfied
  std::optional<T> result;  // nullopt: a family we recognize but do not support
};

const std::vector<Rule>& rules() {
  static const Clause inst{"[INST]"};
  static const Clause mistral_official{"' [INST] ' + system_message", "[AVAILABLE_TOOLS]"};
  static const Clause exaone{"[|system|]"};
  static const std::vector<Rule> r = {
      {{{"<|im_start|>"}, {"<|im_sep|>"}}, T::PHI4},
      {{{"<|im_start|>"}, {"<end_of_utterance>"}}, T::SMOLVLM},
      {{{"<|im_start|>"}}, T::CHATML},
      {{inst, {"[SYSTEM_PROMPT]"}}, T::MISTRAL_V7},
      {{inst, mistral_official, {" [INST]"}}, T::MISTRAL_V1},
      {{inst, mistral_official, {"\"[INST]\""}}, T::MISTRAL_V3_TEKKEN},
      {{inst, mistral_official}, T::MISTRAL_V3},
      {{inst, {"content.strip()"}}, T::LLAMA2_SYS_STRIP},
      {{inst, {"bos_token + '[INST]"}}, T::LLAMA2_SYS_BOS},
      {{inst, {"<<SYS>>"}}, T::LLAMA2_SYS},
      {{inst}, T::LLAMA2},
      {{{"<|assistant|>"}, {"<|end|>"}}, T::PHI3},
      {{{"[gMASK]<sop>"}}, T::CHATGLM4},
      {{{"<|assistant|>"}, {"<|user|>"}, {"</s>"}}, T::FALCON3},
      {{{"<|assistant|>"}, {"<|user|>"}}, T::GLMEDGE},
      {{{"<|{{ item['role'] }}|>"}, {"<|begin_of_image|>"}}, T::GLMEDGE},
      {{{"<|user|>"}, {"<|endoftext|>"}}, T::ZEPHYR},
      {{{"bos_token + message['role']"}}, std::nullopt},  // AlphaMonarch
      {{{"<start_of_turn>"}}, T::GEMMA},
      {{{R"('\n\nAssistant: ' + eos_token)"}}, T::ORION},
      {{{"GPT4 Correct "}}, T::OPENCHAT},
      {{{"USER: "}, {"ASSISTANT: "}, {"SYSTEM: "}}, T::VICUNA_ORCA},
      {{{"USER: "}, {"ASSISTANT: "}}, T::VICUNA},
      {{{"### Instruction:"}, {"<|EOT|>"}}, T::DEEPSEEK},
      {{{"<|START_OF_TURN_TOKEN|>"}, {"<|USER_TOKEN|>"}}, T::COMMAND_R},
      {{{"<|start_header_id|>"}, {"<|end_header_id|>"}}, T::LLAMA3},
      {{{"[gMASK]sop"}}, T::CHATGLM3},
      {{{"<用户>"}}, std::nullopt},  // MiniCPM
      {{{"'Assistant: ' + message['content'] + eos_token"}}, T::DEEPSEEK2},
      {{{"<｜Assistant｜>"}, {"<｜User｜>"}, {"<｜end▁of▁sentence｜>"}}, T::DEEPSEEK3},
      {{exaone, {"[|assistant|]"}, {"[|endofturn|]"}, {"[|tool|]"}}, std::nullopt},  // EXAONE 4
      {{exaone, {"[|assistant|]"}, {"[|endofturn|]"}}, T::EXAONE3},
      {{{"rwkv-world", R"({{- 'User: ' + message['content']|trim + '\n\n' -}})"}}, std::nullopt},
      {{{"<|start_of_role|>"}}, std::nullopt},  // Granite
      {{{"message['role'] + additional_special_tokens[0] + message['content'] + additional_special_tokens[1]"}},
       std::nullopt},  // GigaChat
      {{{"<|role_start|>"}}, T::MEGREZ},
      {{{" Ассистент:"}}, std::nullopt},  // YandexGPT
      {{{"<role>ASSISTANT</role>"}, {"'HUMAN'"}}, T::BAILING},
      {{{"<|header_start|>"}, {"<|header_end|>"}}, T::LLAMA4},
      {{{"<|endofuserprompt|>"}}, T::DOTS1},
  };
  return r;
}

bool satisfied(std::string_view text, const Clause& any_of) {
  for (std::string_view s : any_of) {
    if (text.find(s) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace

std::optional<ChatTemplate> detect_chat_template(std::string_view jinja) {
  for (const auto& f : chat_detail::all_chat_formats()) {
    if (f.name == jinja) return f.id;
  }
  for (const Rule& rule : rules()) {
    bool all = true;
    for (const Clause& c : rule.all) all = all && satisfied(jinja, c);
    if (all) return rule.result;
  }
  return std::nullopt;
}

}  // namespace hart
