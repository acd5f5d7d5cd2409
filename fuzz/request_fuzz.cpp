// The server's request parsers (serve::parse_request, parse_embeddings_request) on arbitrary
// JSON bodies: either an ApiError naming the field, or parameters the scheduler can run: a
// non-empty prompt of ids inside the vocabulary, at least one token to generate, and both inside
// the context (embeddings: inputs of ids inside the vocabulary and the context). A chat request
// that parses has the body's text read as its reply (the tool-call parsers: every call's
// arguments JSON).
// Anthropic's /v1/messages (parse_anthropic_request, count_anthropic_tokens) and llama-server's
// /completion and /infill (on StarCoder's vocabulary, which has FIM tokens) are held to the same,
// and /v1/rerank's parser to inputs of ids inside the vocabulary and the context.
// Every parser runs as on a server with two LoRA adapters (scales 1 and 0): a request's "lora"
// list gives one finite scale per adapter.
// Input: byte 0 picks the endpoint (bit 7 clear: bit 0 chat or completions; bit 7 set: bit 0
// Anthropic messages, else bits 1-2 embeddings, /completion, /infill or rerank) and the chat template
// (bits 1-6: a built-in family, or past them a Jinja template with Hermes tool calls and
// <think>), the rest is the request body.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "chat/chat.h"
#include "chat/chat_formatter.h"
#include "chat/chat_output.h"
#include "fuzz_testdata.h"
#include "gguf/gguf.h"
#include "serve/anthropic_api.h"
#include "serve/embeddings.h"
#include "serve/native_api.h"
#include "serve/openai_api.h"
#include "tokenizer/tokenizer.h"

using namespace hart;

namespace {

std::unique_ptr<Tokenizer>& vocab() {
  static std::unique_ptr<Tokenizer> tok;
  return tok;
}
std::unique_ptr<gguf::File>& vocab_file() {
  static std::unique_ptr<gguf::File> f;
  return f;
}
std::unique_ptr<Tokenizer>& fim_vocab() {
  static std::unique_ptr<Tokenizer> tok;
  return tok;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  auto f = gguf::File::open(fuzz::testdata_path("tokenizer/ggml-vocab-llama-spm.gguf"), gguf::LoadMode::Memory);
  vocab() = Tokenizer::from_gguf(*f);
  vocab_file() = std::move(f);
  fim_vocab() = Tokenizer::from_gguf(*gguf::File::open(fuzz::testdata_path("tokenizer/ggml-vocab-starcoder.gguf"), gguf::LoadMode::Memory));
  return 0;
}

namespace {

[[noreturn]] void unexpected(const serve::ApiError& e) {
  std::fprintf(stderr, "unexpected ApiError %d '%s' for field '%s'\n", e.status, e.what(), e.param.c_str());
  __builtin_trap();
}

bool expected(const serve::ApiError& e) {
  return e.status == 400 && (!e.param.empty() || std::string(e.what()).find("JSON object") != std::string::npos);
}

const ChatFormatter& hermes_jinja() {
  static const ChatFormatter chat(std::make_shared<const JinjaChatTemplate>(
                                      "{# <tool_call> <think> #}{% for m in messages %}<|im_start|>{{ m.role }}\n"
                                      "{{ m.content }}{% if m.tool_calls %}{{ m.tool_calls | tojson }}{% endif %}<|im_end|>\n"
                                      "{% endfor %}{% if tools %}{{ tools | tojson }}{% endif %}"
                                      "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}",
                                      "", ""),
                                  false, false);
  return chat;
}

constexpr int kCtx = 512;
const std::vector<float> kLora = {1.0f, 0.0f};  // the server's adapter scales

int fuzz_rerank(const nlohmann::json& body, const Tokenizer& tok) {
  serve::RerankRequest r;
  try {
    r = serve::parse_rerank_request(body, *vocab_file(), tok, kCtx);
  } catch (const serve::ApiError& e) {
    if (!expected(e)) unexpected(e);
    return 0;
  }
  if (r.inputs.empty() || r.inputs.size() != r.documents.size() || r.top_n > r.inputs.size()) __builtin_trap();
  for (const auto& ids : r.inputs) {
    if (ids.empty() || int(ids.size()) > kCtx) __builtin_trap();
    for (int32_t id : ids)
      if (id < 0 || id >= tok.n_vocab()) __builtin_trap();
  }
  return 0;
}

int fuzz_embeddings(const nlohmann::json& body, const Tokenizer& tok) {
  serve::EmbeddingsRequest r;
  try {
    r = serve::parse_embeddings_request(body, tok, kCtx);
  } catch (const serve::ApiError& e) {
    if (!expected(e)) unexpected(e);
    return 0;
  }
  if (r.inputs.empty()) __builtin_trap();
  for (const auto& ids : r.inputs) {
    if (ids.empty() || int(ids.size()) > kCtx) __builtin_trap();
    for (int32_t id : ids)
      if (id < 0 || id >= tok.n_vocab()) __builtin_trap();
  }
  return 0;
}

// What the scheduler needs of a parsed request, and a chat reply's calls read from the body's text.
void check_generation(const serve::ApiRequest& r, const nlohmann::json& body, const Tokenizer& tok) {
  const serve::GenParams& g = r.gen;
  if (g.prompt.empty() || g.max_tokens < 1 || int64_t(g.prompt.size()) + g.max_tokens > kCtx || g.n < 1) __builtin_trap();
  if (g.lora.size() != kLora.size()) __builtin_trap();
  for (float s : g.lora)
    if (!std::isfinite(s)) __builtin_trap();
  for (int32_t id : g.prompt) {
    if (id < 0 || id >= tok.n_vocab()) __builtin_trap();
  }
  if (r.endpoint == serve::Endpoint::CHAT) {
    const std::string reply = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    for (bool partial : {true, false})
      for (const ParsedToolCall& c : parse_chat_output(r.reply, reply, partial).calls)
        if (!partial && !nlohmann::json::accept(c.arguments)) __builtin_trap();
  }
}

void fuzz_anthropic(const nlohmann::json& body, const serve::PromptContext& pc) {
  try {
    if (serve::count_anthropic_tokens(body, pc) < 1) __builtin_trap();
    check_generation(serve::parse_anthropic_request(body, pc), body, pc.tok);
  } catch (const serve::ApiError& e) {
    if (!expected(e)) unexpected(e);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<std::string> templates = chat_template_names();
  if (size == 0) return 0;
  const nlohmann::json body = nlohmann::json::parse(data + 1, data + size, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return 0;
  const Tokenizer& tok = *vocab();
  if ((data[0] & 0x87) == 0x80) return fuzz_embeddings(body, tok);
  if ((data[0] & 0x87) == 0x86) return fuzz_rerank(body, tok);
  if ((data[0] & 0x81) == 0x80) {  // llama-server's /completion or /infill
    static const ChatFormatter chatml(ChatTemplate::CHATML);
    const bool infill = data[0] & 4;
    const serve::PromptContext pc{infill ? *fim_vocab() : tok, chatml, kCtx, nullptr, 0, nullptr, kLora};
    try {
      check_generation(infill ? serve::parse_infill(body, pc, 2) : serve::parse_native_completion(body, pc, 2), body, pc.tok);
    } catch (const serve::ApiError& e) {
      if (!expected(e)) unexpected(e);
    }
    return 0;
  }

  const size_t which = ((data[0] & 0x7f) >> 1) % (templates.size() + 1);
  const ChatFormatter builtin(chat_template_from_name(templates[which % templates.size()]));
  const serve::PromptContext pc{tok, which == templates.size() ? hermes_jinja() : builtin, kCtx, nullptr, 0, nullptr, kLora};
  if (data[0] & 0x80) {
    fuzz_anthropic(body, pc);
    return 0;
  }
  const serve::Endpoint endpoint = data[0] & 1 ? serve::Endpoint::CHAT : serve::Endpoint::COMPLETION;
  try {
    check_generation(serve::parse_request(body, endpoint, pc), body, tok);
  } catch (const serve::ApiError& e) {
    if (!expected(e)) unexpected(e);
  }
  return 0;
}
