#include <gtest/gtest.h>

#include <vector>

#include "chat/chat.h"
#include "common/error.h"

namespace hart {
namespace {

using T = ChatTemplate;

// system + user + assistant + user. The assistant reply carries padding so the templates that
// trim (llama3, gemma, command-r, ...) are told apart from those that do not.
const std::vector<ChatMessage> kConversation{
    {"system", "You are terse."}, {"user", "Hi"}, {"assistant", "  Hello!  "}, {"user", "Bye"}};

TEST(ApplyChatTemplate, BriefExamples) {
  const std::vector<ChatMessage> hi{{"user", "Hi"}};
  EXPECT_EQ(apply_chat_template(T::LLAMA3, hi, true),
            "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(apply_chat_template(T::CHATML, hi, true), "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(apply_chat_template(T::CHATML, hi, false), "<|im_start|>user\nHi<|im_end|>\n");
}

struct Expected {
  ChatTemplate t;
  const char* text;  // with add_generation_prompt
};

// Each string restates what the real Jinja template (Qwen2/SmolLM2 ChatML, Meta-Llama-3-Instruct,
// Phi-3-small, gemma-7b-it, Mistral-Large-2411 v7, ...) renders for kConversation, without the
// BOS, where llama.cpp's built-in agrees with it; where llama.cpp's built-in deliberately differs
// (Llama 2 spacing, system text folded into the first user turn for Gemma/Orion, Mistral v3 with
// its system prompt first) it is llama.cpp's text.
const Expected kExpected[] = {
    {T::CHATML,
     "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
     "<|im_start|>assistant\n  Hello!  <|im_end|>\n<|im_start|>user\nBye<|im_end|>\n<|im_start|>assistant\n"},
    {T::LLAMA2, "[INST] You are terse.\nHi [/INST]  Hello!  </s>[INST] Bye [/INST]"},
    {T::LLAMA2_SYS, "[INST] <<SYS>>\nYou are terse.\n<</SYS>>\n\nHi [/INST]  Hello!  </s>[INST] Bye [/INST]"},
    {T::LLAMA2_SYS_BOS, "[INST] <<SYS>>\nYou are terse.\n<</SYS>>\n\nHi [/INST]  Hello!  </s><s>[INST] Bye [/INST]"},
    {T::LLAMA2_SYS_STRIP, "[INST] <<SYS>>\nYou are terse.\n<</SYS>>\n\nHi [/INST]Hello!</s>[INST] Bye [/INST]"},
    {T::MISTRAL_V1, " [INST] You are terse.\n\nHi [/INST]   Hello!  </s> [INST] Bye [/INST]"},
    {T::MISTRAL_V3, "[INST] You are terse.\n\nHi[/INST] Hello!</s>[INST] Bye[/INST]"},
    {T::MISTRAL_V3_TEKKEN, "[INST]You are terse.\n\nHi[/INST]  Hello!  </s>[INST]Bye[/INST]"},
    {T::MISTRAL_V7, "[SYSTEM_PROMPT] You are terse.[/SYSTEM_PROMPT][INST] Hi[/INST]   Hello!  </s>[INST] Bye[/INST]"},
    {T::MISTRAL_V7_TEKKEN, "[SYSTEM_PROMPT]You are terse.[/SYSTEM_PROMPT][INST]Hi[/INST]  Hello!  </s>[INST]Bye[/INST]"},
    {T::PHI3,
     "<|system|>\nYou are terse.<|end|>\n<|user|>\nHi<|end|>\n<|assistant|>\n  Hello!  <|end|>\n"
     "<|user|>\nBye<|end|>\n<|assistant|>\n"},
    {T::PHI4,
     "<|im_start|>system<|im_sep|>You are terse.<|im_end|><|im_start|>user<|im_sep|>Hi<|im_end|>"
     "<|im_start|>assistant<|im_sep|>  Hello!  <|im_end|><|im_start|>user<|im_sep|>Bye<|im_end|>"
     "<|im_start|>assistant<|im_sep|>"},
    {T::FALCON3, "<|system|>\nYou are terse.\n<|user|>\nHi\n<|assistant|>\n  Hello!  \n<|user|>\nBye\n<|assistant|>\n"},
    {T::ZEPHYR,
     "<|system|>\nYou are terse.<|endoftext|>\n<|user|>\nHi<|endoftext|>\n<|assistant|>\n  Hello!  <|endoftext|>\n"
     "<|user|>\nBye<|endoftext|>\n<|assistant|>\n"},
    {T::GEMMA,
     "<start_of_turn>user\nYou are terse.\n\nHi<end_of_turn>\n<start_of_turn>model\nHello!<end_of_turn>\n"
     "<start_of_turn>user\nBye<end_of_turn>\n<start_of_turn>model\n"},
    {T::ORION, "Human: You are terse.\n\nHi\n\nAssistant: </s>  Hello!  </s>Human: Bye\n\nAssistant: </s>"},
    {T::OPENCHAT,
     "You are terse.<|end_of_turn|>GPT4 Correct User: Hi<|end_of_turn|>GPT4 Correct Assistant:   Hello!  "
     "<|end_of_turn|>GPT4 Correct User: Bye<|end_of_turn|>GPT4 Correct Assistant:"},
    {T::VICUNA, "You are terse.\n\nUSER: Hi\nASSISTANT:   Hello!  </s>\nUSER: Bye\nASSISTANT:"},
    {T::VICUNA_ORCA, "SYSTEM: You are terse.\nUSER: Hi\nASSISTANT:   Hello!  </s>\nUSER: Bye\nASSISTANT:"},
    {T::DEEPSEEK,
     "You are terse.### Instruction:\nHi\n### Response:\n  Hello!  \n<|EOT|>\n### Instruction:\nBye\n### Response:\n"},
    {T::DEEPSEEK2, "You are terse.\n\nUser: Hi\n\nAssistant:   Hello!  <｜end▁of▁sentence｜>User: Bye\n\nAssistant:"},
    {T::DEEPSEEK3, "You are terse.\n\n<｜User｜>Hi<｜Assistant｜>  Hello!  <｜end▁of▁sentence｜><｜User｜>Bye<｜Assistant｜>"},
    {T::COMMAND_R,
     "<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>You are terse.<|END_OF_TURN_TOKEN|>"
     "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>Hi<|END_OF_TURN_TOKEN|>"
     "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>Hello!<|END_OF_TURN_TOKEN|>"
     "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>Bye<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"},
    {T::LLAMA3,
     "<|start_header_id|>system<|end_header_id|>\n\nYou are terse.<|eot_id|>"
     "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
     "<|start_header_id|>assistant<|end_header_id|>\n\nHello!<|eot_id|>"
     "<|start_header_id|>user<|end_header_id|>\n\nBye<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"},
    {T::LLAMA4,
     "<|header_start|>system<|header_end|>\n\nYou are terse.<|eot|><|header_start|>user<|header_end|>\n\nHi<|eot|>"
     "<|header_start|>assistant<|header_end|>\n\nHello!<|eot|><|header_start|>user<|header_end|>\n\nBye<|eot|>"
     "<|header_start|>assistant<|header_end|>\n\n"},
    {T::CHATGLM3, "[gMASK]sop<|system|>\n You are terse.<|user|>\n Hi<|assistant|>\n   Hello!  <|user|>\n Bye<|assistant|>"},
    {T::CHATGLM4, "[gMASK]<sop><|system|>\nYou are terse.<|user|>\nHi<|assistant|>\n  Hello!  <|user|>\nBye<|assistant|>\n"},
    {T::GLMEDGE, "<|system|>\nYou are terse.<|user|>\nHi<|assistant|>\n  Hello!  <|user|>\nBye<|assistant|>"},
    {T::EXAONE3, "[|system|]You are terse.[|endofturn|]\n[|user|]Hi\n[|assistant|]Hello![|endofturn|]\n[|user|]Bye\n[|assistant|]"},
    {T::MEGREZ,
     "<|role_start|>system<|role_end|>You are terse.<|turn_end|><|role_start|>user<|role_end|>Hi<|turn_end|>"
     "<|role_start|>assistant<|role_end|>  Hello!  <|turn_end|><|role_start|>user<|role_end|>Bye<|turn_end|>"
     "<|role_start|>assistant<|role_end|>"},
    {T::BAILING,
     "<role>SYSTEM</role>You are terse.<role>HUMAN</role>Hi<role>ASSISTANT</role>  Hello!  "
     "<role>HUMAN</role>Bye<role>ASSISTANT</role>"},
    {T::SMOLVLM,
     "<|im_start|>You are terse.\n\nUser: Hi<end_of_utterance>\nAssistant:   Hello!  <end_of_utterance>\n"
     "User: Bye<end_of_utterance>\nAssistant:"},
    {T::DOTS1,
     "<|system|>You are terse.<|endofsystem|><|userprompt|>Hi<|endofuserprompt|><|response|>  Hello!  "
     "<|endofresponse|><|userprompt|>Bye<|endofuserprompt|><|response|>"},
};

TEST(ApplyChatTemplate, EveryTemplateRendersTheConversation) {
  EXPECT_EQ(std::size(kExpected), chat_template_names().size()) << "a template has no expected text";
  for (const Expected& e : kExpected) {
    EXPECT_EQ(apply_chat_template(e.t, kConversation, true), e.text) << chat_template_name(e.t);
  }
}

TEST(ApplyChatTemplate, TurnTemplatesOpenTheirFirstTurnLikeLlamaCpp) {
  // Llama 2 writes its opener before anything; Mistral opens a turn only for a message.
  EXPECT_EQ(apply_chat_template(T::LLAMA2, {}, true), "[INST] ");
  EXPECT_EQ(apply_chat_template(T::MISTRAL_V1, {}, true), "");
  const std::vector<ChatMessage> two_answers{{"user", "a"}, {"assistant", "b"}, {"assistant", "c"}};
  EXPECT_EQ(apply_chat_template(T::MISTRAL_V3_TEKKEN, two_answers, false), "[INST]a[/INST]b</s>[INST]c</s>");
}

TEST(ApplyChatTemplate, GemmaDropsASystemMessageWithNoUserAfterIt) {
  const std::vector<ChatMessage> msgs{{"user", "a"}, {"system", " s "}};
  EXPECT_EQ(apply_chat_template(T::GEMMA, msgs, false), "<start_of_turn>user\na<end_of_turn>\n");
}

TEST(ApplyChatTemplate, RejectsUnknownRoles) {
  const std::vector<ChatMessage> msgs{{"tool", "{}"}};
  EXPECT_THROW(apply_chat_template(T::CHATML, msgs, true), Error);
}

TEST(ChatTemplateNames, RoundTripAndUnknownNamesListTheKnownOnes) {
  for (const std::string& name : chat_template_names()) {
    EXPECT_EQ(chat_template_name(chat_template_from_name(name)), name);
  }
  EXPECT_EQ(chat_template_from_name("llama3"), T::LLAMA3);
  try {
    chat_template_from_name("llama9");
    FAIL() << "no error for an unknown name";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("llama9"), std::string::npos);
    EXPECT_NE(what.find("chatml"), std::string::npos);
    EXPECT_NE(what.find("zephyr"), std::string::npos);
  }
}

}  // namespace
}  // namespace hart
