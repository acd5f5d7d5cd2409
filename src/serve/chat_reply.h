// A chat choice's generated text as OpenAI returns it: a message with content,
// reasoning_content and tool_calls, or the stream deltas that add up to it (a call's first delta
// carries its index, id, type and name; later ones fragments of its arguments).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "chat/chat_output.h"
#include "serve/tool_request.h"
#include "tokenizer/tokenizer.h"

namespace hart::serve {

class ChatReply {
 public:
  explicit ChatReply(OutputSyntax syntax) : syntax_(std::move(syntax)) {}

  // Streaming: the delta that the new piece of text makes final (an empty object when none);
  // `done`: the text is complete.
  nlohmann::json delta(const std::string& piece, bool done);
  // Non-streaming: the message of the whole text.
  nlohmann::json message(const std::string& text);
  // The finish reason of the choice, given the engine's: "tool_calls" when the reply made calls.
  std::string finish_reason(const std::string& engine_reason) const;

 private:
  const std::string& id_of(size_t i, const ParsedToolCall& c);

  OutputSyntax syntax_;
  std::string text_;
  ParsedOutput sent_;            // what the deltas have sent (streaming) or the message (not)
  std::vector<std::string> ids_; // one per call, fixed when the call first shows
};

// How the reply to a request is read: the template's syntax (ChatFormatter::output_syntax); tool
// calls only when the request allows them; reasoning already open when the prompt ends inside a
// reasoning block.
OutputSyntax reply_syntax(OutputSyntax template_syntax, const std::string& prompt, const ToolRequest& tools);

// The control tokens among a syntax's markers (output_markers): the engine must keep their text
// in the output, where decoding drops it.
std::vector<int32_t> marker_tokens(const Tokenizer& tok, const std::vector<std::string>& markers);

}  // namespace hart::serve
