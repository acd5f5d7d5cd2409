#include <gtest/gtest.h>

#include "chat/chat.h"

namespace hart {
namespace {

using T = ChatTemplate;

// Excerpts of real tokenizer.chat_template texts (long ones shortened around their markers).
constexpr const char* kLlama2Chat =  // meta-llama/Llama-2-7b-chat-hf
    "{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\\n' + system_message + "
    "'\\n<</SYS>>\\n\\n' + message['content'] %}{% else %}{% set content = message['content'] %}{% endif %}"
    "{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}"
    "{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}";
constexpr const char* kMistralV02 =  // mistralai/Mistral-7B-Instruct-v0.2 (no system prompt)
    "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}"
    "{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}"
    "{{ message['content'] + eos_token}}{% endif %}{% endfor %}";
constexpr const char* kFusionNet =  // TheBloke/FusionNet_34Bx2_MoE-AWQ
    "{%- if idx > 1 -%}\n{{- bos_token + '[INST] ' + messages[idx]['content'] + ' [/INST]' -}}\n"
    "{% elif messages[idx]['role'] == 'system' %}\n{{- '[INST] <<SYS>>\\n' + messages[idx]['content'] + "
    "'\\n<</SYS>>\\n\\n' -}}";
constexpr const char* kMistralV1 =  // mistralai 'v1' template with a system prompt
    "{%- if loop.first and system_message is defined %}\n"
    "{{- ' [INST] ' + system_message + '\\n\\n' + message['content'] + ' [/INST]' }}";
constexpr const char* kMistralV7 =  // mistralai/Mistral-Large-Instruct-2411
    "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ '[INST] ' + "
    "message['content'] + '[/INST]' }}{% elif message['role'] == 'system' %}{{ '[SYSTEM_PROMPT] ' + "
    "message['content'] + '[/SYSTEM_PROMPT]' }}";
constexpr const char* kLlama3 =  // meta-llama/Meta-Llama-3-8B-Instruct
    "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = "
    "'<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + "
    "'<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}"
    "{{ content }}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}";
constexpr const char* kQwen2 =  // Qwen/Qwen2-0.5B-Instruct
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' }}{% endif %}"
    "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";
constexpr const char* kSmolLM2 =  // HuggingFaceTB/SmolLM2-135M-Instruct
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}"
    "{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}";
constexpr const char* kPhi4 =  // microsoft/phi-4
    "{% if (message['role'] == 'system') %}{{'<|im_start|>system<|im_sep|>' + message['content'] + '<|im_end|>'}}";
constexpr const char* kPhi3Mini =  // microsoft/Phi-3-mini-4k-instruct
    "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') %}{{'<|user|>' + '\n' + "
    "message['content'] + '<|end|>' + '\n' + '<|assistant|>' + '\n'}}{% elif (message['role'] == 'assistant') %}"
    "{{message['content'] + '<|end|>' + '\n'}}{% endif %}{% endfor %}";
constexpr const char* kZephyr7bBeta =  // HuggingFaceH4/zephyr-7b-beta
    "{% for message in messages %}\n{% if message['role'] == 'user' %}\n{{ '<|user|>\n' + message['content'] + "
    "eos_token }}\n{% elif message['role'] == 'assistant' %}\n{{ '<|assistant|>\n'  + message['content'] + "
    "eos_token }}\n{% endif %}\n{% if loop.last and add_generation_prompt %}\n{{ '<|assistant|>' }}\n{% endif %}";
constexpr const char* kGemma =  // google/gemma-7b-it
    "{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}"
    "{% endif %}{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}";
constexpr const char* kCommandR =  // CohereForAI/c4ai-command-r-plus
    "{% if message['role'] == 'user' %}{{ '<|START_OF_TURN_TOKEN|><|USER_TOKEN|>' + content.strip() + "
    "'<|END_OF_TURN_TOKEN|>' }}";
constexpr const char* kDeepseekV2 =  // deepseek-ai/DeepSeek-V2-Lite-Chat
    "{% if message['role'] == 'user' %}{{ 'User: ' + message['content'] + '\n\n' }}"
    "{% elif message['role'] == 'assistant' %}{{ 'Assistant: ' + message['content'] + eos_token }}";
constexpr const char* kChatGlm3 =  // THUDM/chatglm3-6b
    "{% for message in messages %}{% if loop.first %}[gMASK]sop<|{{ message['role'] }}|>\n "
    "{{ message['content'] }}{% else %}<|{{ message['role'] }}|>\n {{ message['content'] }}{% endif %}{% endfor %}";
constexpr const char* kAlphaMonarch =  // mlabonne/AlphaMonarch-7B: recognized, not supported
    "{% for message in messages %}{{bos_token + message['role'] + '\\n' + message['content'] + eos_token + '\\n'}}";

TEST(DetectChatTemplate, RecognizesRealTemplates) {
  const std::pair<const char*, T> cases[] = {
      {kLlama2Chat, T::LLAMA2_SYS_STRIP}, {kMistralV02, T::LLAMA2},   {kFusionNet, T::LLAMA2_SYS_BOS},
      {kMistralV1, T::MISTRAL_V1},        {kMistralV7, T::MISTRAL_V7}, {kLlama3, T::LLAMA3},
      {kQwen2, T::CHATML},                {kSmolLM2, T::CHATML},       {kPhi4, T::PHI4},
      {kPhi3Mini, T::PHI3},               {kGemma, T::GEMMA},          {kCommandR, T::COMMAND_R},
      {kDeepseekV2, T::DEEPSEEK2},        {kChatGlm3, T::CHATGLM3},
      // llama.cpp checks "<|assistant|>" + "<|user|>" (GLM-Edge) before the Zephyr markers, and
      // zephyr-7b-beta writes its end marker as eos_token, so llama.cpp formats it as glmedge too.
      {kZephyr7bBeta, T::GLMEDGE},
  };
  for (const auto& [text, expected] : cases) {
    const auto got = detect_chat_template(text);
    ASSERT_TRUE(got.has_value()) << text;
    EXPECT_EQ(chat_template_name(*got), chat_template_name(expected)) << text;
  }
}

TEST(DetectChatTemplate, ZephyrNeedsItsLiteralEndOfTextMarker) {
  EXPECT_EQ(detect_chat_template("{{ '<|user|>\\n' + message['content'] + '<|endoftext|>' }}"), T::ZEPHYR);
}

TEST(DetectChatTemplate, AcceptsTemplateNames) {
  EXPECT_EQ(detect_chat_template("chatml"), T::CHATML);
  EXPECT_EQ(detect_chat_template("mistral-v7-tekken"), T::MISTRAL_V7_TEKKEN);
}

TEST(DetectChatTemplate, UnknownAndUnsupportedGiveNothing) {
  EXPECT_EQ(detect_chat_template("{% for m in messages %}{{ m['content'] }}{% endfor %}"), std::nullopt);
  EXPECT_EQ(detect_chat_template(""), std::nullopt);
  EXPECT_EQ(detect_chat_template(kAlphaMonarch), std::nullopt);
}

}  // namespace
}  // namespace hart
