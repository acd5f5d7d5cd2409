#include "chat/chat_formatter.h"

#include "common/error.h"

namespace hart {

ChatFormatter::ChatFormatter(ChatTemplate builtin) : builtin_(builtin) { set_up_tools(); }

ChatFormatter::ChatFormatter(std::shared_ptr<const JinjaChatTemplate> jinja, bool strip_bos, bool strip_eos,
                             std::shared_ptr<const JinjaChatTemplate> tool_use)
    : jinja_(std::move(jinja)), tool_use_(std::move(tool_use)), strip_bos_(strip_bos), strip_eos_(strip_eos) {
  set_up_tools();
}

void ChatFormatter::set_up_tools() {
  auto setup = std::make_shared<ToolSetup>();
  const JinjaChatTemplate* t = tool_use_ ? tool_use_.get() : jinja_.get();
  std::string eos;
  RenderMessages render;
  if (t) {
    setup->syntax = output_syntax_of_template(t->source());
    const ChatTemplateCaps& caps = t->caps();
    setup->needs = {!caps.tools, !caps.tool_calls, !caps.tool_responses};
    eos = t->eos_token();
    render = [t](const nlohmann::ordered_json& messages, bool add_generation_prompt) {
      ChatTemplateInputs in;
      in.messages = messages;
      in.add_generation_prompt = add_generation_prompt;
      return t->apply(in);
    };
    if (setup->syntax.tools == ToolCallSyntax::NONE && caps.tool_calls) {
      const auto derived = derive_tool_syntax([t](const nlohmann::ordered_json& messages, const nlohmann::ordered_json& tools) {
        ChatTemplateInputs in;
        in.messages = messages;
        in.tools = tools;
        in.add_generation_prompt = false;
        return t->apply(in);
      });
      if (derived) {
        setup->syntax.tools = ToolCallSyntax::DERIVED;
        setup->syntax.derived = std::make_shared<const DerivedToolSyntax>(*derived);
      }
    }
  } else {
    render = [b = builtin_](const nlohmann::ordered_json& messages, bool add_generation_prompt) {
      return apply_chat_template(b, plain_chat_messages(messages), add_generation_prompt);
    };
  }
  if (setup->syntax.tools == ToolCallSyntax::NONE) {
    setup->syntax.tools = ToolCallSyntax::GENERIC;
    if (setup->needs.describe_tools) setup->example = generic_call_example(render, eos, setup->needs);
  }
  tools_ = std::move(setup);
}

OutputSyntax ChatFormatter::output_syntax(bool has_tools) const {
  if (has_tools) return tools_->syntax;
  return jinja_ ? output_syntax_of_template(jinja_->source()) : OutputSyntax{};
}

std::string ChatFormatter::name() const { return jinja_ ? "jinja" : chat_template_name(builtin_); }

std::vector<ChatMessage> plain_chat_messages(const nlohmann::ordered_json& messages) {
  if (!messages.is_array()) throw Error("messages must be a list");
  std::vector<ChatMessage> out;
  for (size_t i = 0; i < messages.size(); ++i) {
    const auto& m = messages[i];
    const std::string where = "messages[" + std::to_string(i) + "]";
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) throw Error(where + " needs a string 'role'");
    std::string role = m["role"].get<std::string>();
    if (role == "developer") role = "system";
    if (role != "system" && role != "user" && role != "assistant")
      throw Error(where + ".role '" + role + "' is not system, user or assistant");
    const auto content = m.value("content", nlohmann::ordered_json(""));
    std::string text;
    if (content.is_string()) {
      text = content.get<std::string>();
    } else if (content.is_array()) {
      for (const auto& part : content) {
        // Each field's type is checked before it is read (value("type", "") throws on a number).
        const auto is_string_field = [&](const char* k) { return part.contains(k) && part[k].is_string(); };
        // A media marker (an image's place, image_input.h) is text the prompt keeps as it is.
        if (!part.is_object() || !is_string_field("type") || (part["type"] != "text" && part["type"] != "media_marker") ||
            !is_string_field("text"))
          throw Error(where + ".content: only text parts are supported");
        text += part["text"].get<std::string>();
      }
    } else if (!content.is_null()) {
      throw Error(where + ".content must be a string or an array of parts");
    }
    out.push_back({role, text});
  }
  return out;
}

std::string ChatFormatter::apply(const ChatRequest& r) const {
  const bool has_tools = r.tools.is_array() && !r.tools.empty();
  if (!has_tools || tools_->syntax.tools != ToolCallSyntax::GENERIC) return render(r);
  ChatRequest generic = r;
  generic.messages = generic_tool_messages(r.messages, r.tools, tools_->needs, tools_->example);
  if (!jinja_) generic.tools = nullptr;  // the built-in families know no tools
  return render(generic);
}

std::string ChatFormatter::render(const ChatRequest& r) const {
  if (!jinja_) return apply_chat_template(builtin_, plain_chat_messages(r.messages), r.add_generation_prompt);
  ChatTemplateInputs in;
  in.messages = r.messages;
  in.tools = r.tools;
  in.add_generation_prompt = r.add_generation_prompt;
  in.kwargs = r.kwargs;
  in.now = local_now();
  const bool has_tools = r.tools.is_array() && !r.tools.empty();
  const JinjaChatTemplate& t = has_tools && tool_use_ ? *tool_use_ : *jinja_;
  std::string prompt = t.apply(in);
  const std::string& bos = t.bos_token();
  const std::string& eos = t.eos_token();
  if (strip_bos_ && !bos.empty() && prompt.compare(0, bos.size(), bos) == 0) prompt.erase(0, bos.size());
  if (strip_eos_ && !eos.empty() && prompt.size() >= eos.size() &&
      prompt.compare(prompt.size() - eos.size(), eos.size(), eos) == 0)
    prompt.erase(prompt.size() - eos.size());
  return prompt;
}

}  // namespace hart
