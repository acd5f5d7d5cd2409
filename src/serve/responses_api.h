// /v1/responses, OpenAI's Responses API, over the chat pipeline: the request becomes a chat
// completions body (instructions, input messages and function-call items, function tools), and
// the chat reply becomes output items (reasoning, message, function_call), or the stream of
// typed events that builds them (response.created ... response.completed).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "serve/openai_api.h"

namespace hart::serve {

// Throws ApiError (400) naming the field for what the server cannot honour: tools other than
// functions, previous_response_id (no stored responses), text formats other than plain text.
nlohmann::ordered_json responses_to_chat(const nlohmann::ordered_json& body);

struct ResponsesEvent {
  std::string type;
  nlohmann::json data;  // includes "type" and "sequence_number"
};

class ChatReply;

class ResponsesWriter {
 public:
  // The tokenizer is unused: the constructor is ResponseWriter's, for the server's generic path.
  ResponsesWriter(const ApiRequest& req, const Tokenizer&, std::string model);
  ~ResponsesWriter();

  std::vector<ResponsesEvent> events(const Event& ev);  // streaming
  void add(const Event& ev);                             // not streaming
  nlohmann::json response() const;
  bool finished() const { return done_; }

 private:
  struct Item {
    nlohmann::json item;  // as in the response's output
    std::string kind;     // "reasoning", "message" or "function_call"
    std::string text;     // reasoning / message text, or a call's arguments so far
    bool closed = false;
  };

  nlohmann::json envelope(const char* status) const;
  void emit(std::vector<ResponsesEvent>& out, std::string type, nlohmann::json data);
  Item& open(std::vector<ResponsesEvent>& out, const std::string& kind, nlohmann::json item);
  void close(std::vector<ResponsesEvent>& out, size_t index);
  void record_end(const Event& ev);

  std::string model_, id_;
  int64_t created_;
  std::unique_ptr<ChatReply> reply_;
  WholeText whole_;  // not streaming
  std::vector<Item> items_;
  int seq_ = 0;
  bool started_ = false, done_ = false;
  Event end_;
  std::string status_ = "in_progress";
};

}  // namespace hart::serve
