// The server's request parser (serve::parse_request) on arbitrary JSON bodies: either an
// ApiError naming the field, or parameters the scheduler can run: a non-empty prompt of ids
// inside the vocabulary, at least one token to generate, and both inside the context.
// Input: byte 0 picks the endpoint and the chat template, the rest is the request body.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "chat/chat.h"
#include "chat/chat_formatter.h"
#include "fuzz_testdata.h"
#include "gguf/gguf.h"
#include "serve/openai_api.h"
#include "tokenizer/tokenizer.h"

using namespace hart;

namespace {

std::unique_ptr<Tokenizer>& vocab() {
  static std::unique_ptr<Tokenizer> tok;
  return tok;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const auto f = gguf::File::open(fuzz::testdata_path("tokenizer/ggml-vocab-llama-spm.gguf"), gguf::LoadMode::Memory);
  vocab() = Tokenizer::from_gguf(*f);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<std::string> templates = chat_template_names();
  if (size == 0) return 0;
  const serve::Endpoint endpoint = data[0] & 1 ? serve::Endpoint::CHAT : serve::Endpoint::COMPLETION;
  const ChatFormatter chat(chat_template_from_name(templates[(data[0] >> 1) % templates.size()]));
  const nlohmann::json body = nlohmann::json::parse(data + 1, data + size, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return 0;

  constexpr int kCtx = 512;
  const Tokenizer& tok = *vocab();
  serve::ApiRequest r;
  try {
    r = serve::parse_request(body, endpoint, serve::PromptContext{tok, chat, kCtx});
  } catch (const serve::ApiError& e) {
    if (e.status != 400 || (e.param.empty() && std::string(e.what()).find("JSON object") == std::string::npos)) {
      std::fprintf(stderr, "unexpected ApiError %d '%s' for field '%s'\n", e.status, e.what(), e.param.c_str());
      __builtin_trap();
    }
    return 0;
  }
  const serve::GenParams& g = r.gen;
  if (g.prompt.empty() || g.max_tokens < 1 || int64_t(g.prompt.size()) + g.max_tokens > kCtx) __builtin_trap();
  for (int32_t id : g.prompt) {
    if (id < 0 || id >= tok.n_vocab()) __builtin_trap();
  }
  return 0;
}
