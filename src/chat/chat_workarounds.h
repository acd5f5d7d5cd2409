// The per-family message rewrites llama.cpp applies before rendering some templates (chosen, as
// llama.cpp chooses them, by marker strings in the template source), and its fix-ups of the
// rendered prompt.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace hart::chat_detail {

void adjust_messages_for_template(const std::string& source, nlohmann::ordered_json& messages);
void adjust_prompt_for_template(const std::string& source, bool add_generation_prompt, std::string& prompt);

}  // namespace hart::chat_detail
