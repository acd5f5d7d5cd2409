// The template table: each entry restates what llama.cpp's built-in template of that name writes
// (src/llama-chat.cpp, llm_chat_apply_template), as data.
#include <algorithm>
#include <string>

#include "chat/chat_format.h"
#include "common/error.h"

namespace hart::chat_detail {

namespace {

using T = ChatTemplate;

// The common shape "<open><role><close>content<end>", generation prompt "<open>assistant<close>".
// role_names: how system/user/assistant are spelled inside the tags.
ChatFormat tagged(T id, std::string name, std::string open, std::string close, std::string end,
                  bool trim = false,
                  const std::array<std::string, 3>& role_names = {"system", "user", "assistant"}) {
  ChatFormat f;
  f.id = id;
  f.name = std::move(name);
  for (int r = 0; r < 3; ++r) f.roles[r] = {open + role_names[r] + close, end, trim};
  f.generation_prompt = open + role_names[kAssistant] + close;
  return f;
}

ChatFormat with_preamble(ChatFormat f, std::string preamble) {
  f.preamble = std::move(preamble);
  return f;
}

ChatFormat with_generation_prompt(ChatFormat f, std::string prompt) {
  f.generation_prompt = std::move(prompt);
  return f;
}

// Templates that spell each role differently: {prefix, suffix, trim} per role.
ChatFormat per_role(T id, std::string name, RoleFormat system, RoleFormat user, RoleFormat assistant,
                    std::string generation_prompt) {
  ChatFormat f;
  f.id = id;
  f.name = std::move(name);
  f.roles = {std::move(system), std::move(user), std::move(assistant)};
  f.generation_prompt = std::move(generation_prompt);
  return f;
}

// Llama 2 and Mistral v1/v3: "[INST] user [/INST]answer</s>" turns, no generation prompt.
ChatFormat inst_turns(T id, std::string name, std::string open, std::string reopen, RoleFormat system,
                      RoleFormat user, RoleFormat assistant, bool open_at_start) {
  ChatFormat f = per_role(id, std::move(name), std::move(system), std::move(user), std::move(assistant), "");
  f.turn_open = std::move(open);
  f.turn_reopen = std::move(reopen);
  f.first_turn_open_at_start = open_at_start;
  return f;
}

ChatFormat llama2(T id, std::string name, bool sys_tags, bool strip, std::string reopen) {
  const RoleFormat system = sys_tags ? RoleFormat{"<<SYS>>\n", "\n<</SYS>>\n\n", strip} : RoleFormat{"", "\n", strip};
  return inst_turns(id, std::move(name), "[INST] ", std::move(reopen), system, {"", " [/INST]", strip},
                    {"", "</s>", strip}, true);
}

ChatFormat folding_system(ChatFormat f) {
  f.system_folds_into_user = true;
  return f;
}

const char* const kDeepseekEos = "<｜end▁of▁sentence｜>";

std::array<ChatFormat, 33> build() {
  const std::string ds_eos = kDeepseekEos;
  return {{
      tagged(T::CHATML, "chatml", "<|im_start|>", "\n", "<|im_end|>\n"),
      llama2(T::LLAMA2, "llama2", false, false, "[INST] "),
      llama2(T::LLAMA2_SYS, "llama2-sys", true, false, "[INST] "),
      llama2(T::LLAMA2_SYS_BOS, "llama2-sys-bos", true, false, "<s>[INST] "),
      llama2(T::LLAMA2_SYS_STRIP, "llama2-sys-strip", true, true, "[INST] "),
      inst_turns(T::MISTRAL_V1, "mistral-v1", " [INST] ", " [INST] ", {"", "\n\n"}, {"", " [/INST]"},
                 {" ", "</s>"}, false),
      inst_turns(T::MISTRAL_V3, "mistral-v3", "[INST] ", "[INST] ", {"", "\n\n"}, {"", "[/INST]"},
                 {" ", "</s>", true}, false),
      inst_turns(T::MISTRAL_V3_TEKKEN, "mistral-v3-tekken", "[INST]", "[INST]", {"", "\n\n"}, {"", "[/INST]"},
                 {"", "</s>"}, false),
      per_role(T::MISTRAL_V7, "mistral-v7", {"[SYSTEM_PROMPT] ", "[/SYSTEM_PROMPT]"}, {"[INST] ", "[/INST]"},
               {" ", "</s>"}, ""),
      per_role(T::MISTRAL_V7_TEKKEN, "mistral-v7-tekken", {"[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]"},
               {"[INST]", "[/INST]"}, {"", "</s>"}, ""),
      tagged(T::PHI3, "phi3", "<|", "|>\n", "<|end|>\n"),
      tagged(T::PHI4, "phi4", "<|im_start|>", "<|im_sep|>", "<|im_end|>"),
      tagged(T::FALCON3, "falcon3", "<|", "|>\n", "\n"),
      tagged(T::ZEPHYR, "zephyr", "<|", "|>\n", "<|endoftext|>\n"),
      folding_system(tagged(T::GEMMA, "gemma", "<start_of_turn>", "\n", "<end_of_turn>\n", true,
                            {"system", "user", "model"})),
      folding_system(per_role(T::ORION, "orion", {"", ""}, {"Human: ", "\n\nAssistant: </s>"}, {"", "</s>"}, "")),
      per_role(T::OPENCHAT, "openchat", {"", "<|end_of_turn|>"}, {"GPT4 Correct User: ", "<|end_of_turn|>"},
               {"GPT4 Correct Assistant: ", "<|end_of_turn|>"}, "GPT4 Correct Assistant:"),
      per_role(T::VICUNA, "vicuna", {"", "\n\n"}, {"USER: ", "\n"}, {"ASSISTANT: ", "</s>\n"}, "ASSISTANT:"),
      per_role(T::VICUNA_ORCA, "vicuna-orca", {"SYSTEM: ", "\n"}, {"USER: ", "\n"}, {"ASSISTANT: ", "</s>\n"},
               "ASSISTANT:"),
      per_role(T::DEEPSEEK, "deepseek", {"", ""}, {"### Instruction:\n", "\n"}, {"### Response:\n", "\n<|EOT|>\n"},
               "### Response:\n"),
      per_role(T::DEEPSEEK2, "deepseek2", {"", "\n\n"}, {"User: ", "\n\n"}, {"Assistant: ", ds_eos}, "Assistant:"),
      per_role(T::DEEPSEEK3, "deepseek3", {"", "\n\n"}, {"<｜User｜>", ""},
               {"<｜Assistant｜>", ds_eos}, "<｜Assistant｜>"),
      tagged(T::COMMAND_R, "command-r", "<|START_OF_TURN_TOKEN|>", "", "<|END_OF_TURN_TOKEN|>", true,
             {"<|SYSTEM_TOKEN|>", "<|USER_TOKEN|>", "<|CHATBOT_TOKEN|>"}),
      tagged(T::LLAMA3, "llama3", "<|start_header_id|>", "<|end_header_id|>\n\n", "<|eot_id|>", true),
      tagged(T::LLAMA4, "llama4", "<|header_start|>", "<|header_end|>\n\n", "<|eot|>", true),
      with_generation_prompt(with_preamble(tagged(T::CHATGLM3, "chatglm3", "<|", "|>\n ", ""), "[gMASK]sop"),
                             "<|assistant|>"),
      with_preamble(tagged(T::CHATGLM4, "chatglm4", "<|", "|>\n", ""), "[gMASK]<sop>"),
      with_generation_prompt(tagged(T::GLMEDGE, "glmedge", "<|", "|>\n", ""), "<|assistant|>"),
      per_role(T::EXAONE3, "exaone3", {"[|system|]", "[|endofturn|]\n", true}, {"[|user|]", "\n", true},
               {"[|assistant|]", "[|endofturn|]\n", true}, "[|assistant|]"),
      tagged(T::MEGREZ, "megrez", "<|role_start|>", "<|role_end|>", "<|turn_end|>"),
      tagged(T::BAILING, "bailing", "<role>", "</role>", "", false, {"SYSTEM", "HUMAN", "ASSISTANT"}),
      with_preamble(per_role(T::SMOLVLM, "smolvlm", {"", "\n\n"}, {"User: ", "<end_of_utterance>\n"},
                             {"Assistant: ", "<end_of_utterance>\n"}, "Assistant:"),
                    "<|im_start|>"),
      per_role(T::DOTS1, "dots1", {"<|system|>", "<|endofsystem|>"}, {"<|userprompt|>", "<|endofuserprompt|>"},
               {"<|response|>", "<|endofresponse|>"}, "<|response|>"),
  }};
}

}  // namespace

const std::array<ChatFormat, 33>& all_chat_formats() {
  static const std::array<ChatFormat, 33> formats = build();
  return formats;
}

const ChatFormat& chat_format(ChatTemplate t) {
  const ChatFormat& f = all_chat_formats()[static_cast<size_t>(t)];
  if (f.id != t) throw Error("chat template table is out of order at " + f.name);
  return f;
}

}  // namespace hart::chat_detail

namespace hart {

std::vector<std::string> chat_template_names() {
  std::vector<std::string> names;
  for (const auto& f : chat_detail::all_chat_formats()) names.push_back(f.name);
  return names;
}

std::string chat_template_name(ChatTemplate t) { return chat_detail::chat_format(t).name; }

ChatTemplate chat_template_from_name(std::string_view name) {
  for (const auto& f : chat_detail::all_chat_formats()) {
    if (f.name == name) return f.id;
  }
  std::string known;
  for (const auto& f : chat_detail::all_chat_formats()) known += (known.empty() ? "" : ", ") + f.name;
  throw Error("unknown chat template '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace hart
