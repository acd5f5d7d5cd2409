// The OpenAI wire format: request bodies of /v1/chat/completions and /v1/completions checked
// and turned into GenParams, and events turned into response objects and stream chunks.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "chat/chat_formatter.h"
#include "chat/chat_output.h"
#include "common/error.h"
#include "serve/request.h"
#include "spec/spec_factory.h"
#include "tokenizer/tokenizer.h"

namespace hart::serve {

// A request the server refuses: HTTP status, OpenAI error type, the offending field.
class ApiError : public Error {
 public:
  ApiError(int status, std::string type, const std::string& message, std::string param = {})
      : Error(message), status(status), type(std::move(type)), param(std::move(param)) {}
  int status;
  std::string type, param;
};

// Refuses a request for a bad field: 400 "invalid_request_error" naming `param`.
[[noreturn]] void invalid_request(const std::string& param, const std::string& message);

nlohmann::json error_body(const std::string& message, const std::string& type, const std::string& param = {});

enum class Endpoint { CHAT, COMPLETION };

struct ApiRequest {
  Endpoint endpoint;
  GenParams gen;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  int top_logprobs = 0;
  OutputSyntax reply{};  // chat: how the reply splits into reasoning, content and tool calls (chat_reply.h)
};

class ImageEncoder;

struct PromptContext {
  const Tokenizer& tok;
  const ChatFormatter& chat;
  int n_ctx;
  // The server's speculative decoding (its settings, what it can draft with) and the step size
  // a verification batch must fit; nullptr: none.
  const spec::SpecFactory* speculation = nullptr;
  int chunk_size = 0;
  ImageEncoder* vision = nullptr;  // --mmproj's (image_input.h); nullptr: images are refused
  // The server's LoRA adapter scales now (--lora, POST /lora-adapters), one per adapter.
  std::vector<float> lora = {};
};

// Throws ApiError (400) naming the field for invalid values or a prompt that does not fit.
// Speculative decoding per request: llama-server's flat keys "speculative.n_max" (0: none; it
// bounds every type's draft), "speculative.n_min", "speculative.p_min" (a draft model's) and
// "speculative.type" (a --spec-type list the server can draft with, or none); a request with
// images is not drafted (the server's default types are dropped, a request's own refused).
// LoRA adapters: llama-server's "lora", [{"id": N, "scale": S}, ...], every adapter not listed at
// scale 0 (an empty list or none: the server's scales); an id the server has not loaded is a 400.
// The
// body keeps its key order: a chat template prints the tools' schemas as the client wrote them.
ApiRequest parse_request(const nlohmann::ordered_json& body, Endpoint endpoint, const PromptContext& pc);

// llama-server's list of adapter scales, [{"id": N, "scale": S}, ...] (a request's "lora" and
// POST /lora-adapters): one scale per adapter of the n loaded, 0 for those not listed. Throws
// ApiError (400, naming `param`) for another shape, an id not loaded, or a scale not finite.
std::vector<float> lora_scales(const nlohmann::ordered_json& list, size_t n_adapters, const std::string& param);

class ChatReply;

// The prompt text of a chat request's messages (llama-server's /apply-template).
std::string chat_prompt_text(const nlohmann::ordered_json& body, const ChatFormatter& chat);

// Builds the responses of one request, from the events of its choices.
class ResponseWriter {
 public:
  ResponseWriter(const ApiRequest& req, const Tokenizer& tok, std::string model);
  ~ResponseWriter();

  // Streaming: the chunks an event turns into (possibly none).
  std::vector<nlohmann::json> chunks(const Event& ev);
  // Non-streaming: collect every event, then the response.
  void add(const Event& ev);
  nlohmann::json response() const;
  // Every choice is done.
  bool finished() const { return n_done_ == int(choices_.size()); }

 private:
  struct Choice {
    std::string text;
    std::vector<TokenInfo> tokens;
    std::unique_ptr<ChatReply> chat;  // chat endpoint: the reply's parser
    bool sent_role = false;
    Event done;
  };

  nlohmann::json envelope(const char* object) const;
  nlohmann::json choice(int index, const nlohmann::json& body, const nlohmann::json& finish,
                        const std::vector<TokenInfo>& tokens) const;
  nlohmann::json logprobs(const std::vector<TokenInfo>& tokens) const;
  nlohmann::json usage() const;
  nlohmann::json timings() const;
  Choice& choice_of(const Event& ev);
  std::string finish_reason(const Choice& c) const;

  const ApiRequest& req_;
  const Tokenizer& tok_;
  std::string model_, id_;
  int64_t created_;
  std::vector<Choice> choices_;
  int n_done_ = 0;
};

}  // namespace hart::serve
