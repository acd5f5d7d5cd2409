// /v1/messages and /v1/messages/count_tokens, Anthropic's Messages API, over the chat pipeline:
// the request becomes a chat completions body (system, text / tool_use / tool_result / thinking
// blocks, tools with input_schema, tool_choice auto / any / tool / none), and the chat reply
// becomes content blocks (thinking, text, tool_use), or Anthropic's event stream that builds them
// (message_start, ping, content_block_start / delta / stop, message_delta, message_stop).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve/openai_api.h"

namespace hart::serve {

// The chat completions body of a Messages request. Throws ApiError (400) naming the field for
// what the server cannot honour: image or document blocks, server tools, a tool_result that
// answers no earlier tool_use, an unknown block type.
nlohmann::ordered_json anthropic_to_chat(const nlohmann::ordered_json& body);

// A Messages request, parsed: the chat request of anthropic_to_chat with every stop sequence
// (Anthropic allows more than OpenAI's four).
ApiRequest parse_anthropic_request(const nlohmann::ordered_json& body, const PromptContext& pc);

// The prompt tokens a request would have (count_tokens); throws ApiError (400) as above.
int count_anthropic_tokens(const nlohmann::ordered_json& body, const PromptContext& pc);

// Anthropic's error object: {"type": "error", "error": {"type": ..., "message": ...}}, its
// type named by the HTTP status (invalid_request_error, authentication_error, overloaded_error...).
nlohmann::json anthropic_error_body(int status, const std::string& message);

struct AnthropicEvent {
  std::string type;
  nlohmann::json data;  // includes "type"
};

class ChatReply;

class AnthropicWriter {
 public:
  // The tokenizer is unused: the constructor is ResponseWriter's, for the server's generic path.
  AnthropicWriter(const ApiRequest& req, const Tokenizer&, std::string model);
  ~AnthropicWriter();

  std::vector<AnthropicEvent> events(const Event& ev);  // streaming
  void add(const Event& ev);                             // not streaming
  nlohmann::json response() const;
  bool finished() const { return done_; }

 private:
  struct Block {
    nlohmann::json block;  // as in the message's content
    std::string text;      // thinking / text so far, or a tool_use's input JSON so far
    bool closed = false;
  };

  nlohmann::json message(const nlohmann::json& stop_reason, const nlohmann::json& stop_sequence) const;
  nlohmann::json usage() const;
  size_t open(std::vector<AnthropicEvent>& out, nlohmann::json block);
  void close_open(std::vector<AnthropicEvent>& out);
  void delta(std::vector<AnthropicEvent>& out, size_t index, nlohmann::json d);
  std::string stop_reason() const;

  size_t n_prompt_;
  std::string model_, id_;
  std::unique_ptr<ChatReply> reply_;
  WholeText whole_;  // not streaming
  std::vector<Block> blocks_;
  std::vector<size_t> call_blocks_;  // the block of each tool call, by the call's index
  bool started_ = false, done_ = false;
  Event end_;
};

}  // namespace hart::serve
