// hart template: renders one conversation through a Jinja chat template and prints the prompt,
// exactly what hart chat / hart serve would feed the tokenizer (before BOS handling). The case
// file holds one object of ../shared/testdata/chat_templates/cases.json (or the whole list and
// --index): messages, tools, add_generation_prompt, bos_token, eos_token, enable_thinking,
// chat_template_kwargs, now_utc and template_caps, each optional but messages.
#include <cstdio>
#include <ctime>
#include <string>

#include "chat/chat_jinja.h"
#include "chat_setup.h"
#include "command.h"
#include "common/error.h"
#include "parse_args.h"

namespace hart::cli {
namespace {

using json = nlohmann::ordered_json;

// "2025-01-15T12:00:00Z" as the calendar time strftime_now() formats.
std::tm parse_utc(const std::string& s) {
  std::tm t{};
  const char* end = strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &t);
  if (!end || (*end != '\0' && *end != 'Z')) throw Error("now_utc '" + s + "' is not YYYY-MM-DDTHH:MM:SSZ");
  const std::time_t secs = timegm(&t);
  gmtime_r(&secs, &t);  // fills the weekday and day of the year
  return t;
}

bool flag(const json& c, const char* key, bool dflt) {
  if (!c.contains(key) || c[key].is_null()) return dflt;
  if (!c[key].is_boolean()) throw Error(std::string("case: '") + key + "' must be true or false");
  return c[key].get<bool>();
}

std::string text(const json& c, const char* key, const std::string& dflt) {
  if (!c.contains(key) || c[key].is_null()) return dflt;
  if (!c[key].is_string()) throw Error(std::string("case: '") + key + "' must be a string");
  return c[key].get<std::string>();
}

ChatTemplateCaps caps_from(const json& c) {
  const auto get = [&](const char* key, bool dflt) { return flag(c, key, dflt); };
  ChatTemplateCaps caps;
  caps.system_role = get("supports_system_role", caps.system_role);
  caps.tool_calls = get("supports_tool_calls", caps.tool_calls);
  caps.object_arguments = get("supports_object_arguments", caps.object_arguments);
  caps.string_content = get("supports_string_content", caps.string_content);
  caps.typed_content = get("supports_typed_content", caps.typed_content);
  return caps;
}

int cmd_template(int argc, char** argv) {
  CLI::App app{"Render a conversation through a Jinja chat template and print the prompt", "hart template"};
  std::string template_file, model, name, case_file;
  int index = -1;
  auto* t = app.add_option("--template", template_file, "a Jinja template file")->check(CLI::ExistingFile);
  auto* m = app.add_option("-m,--model", model, "take the template (and BOS/EOS texts) from this GGUF")->check(CLI::ExistingFile);
  t->excludes(m);
  app.add_option("--name", name, "with -m: the named variant tokenizer.chat_template.NAME");
  app.add_option("--case", case_file, "a JSON object with the keys of chat_templates/cases.json")->required()->check(CLI::ExistingFile);
  app.add_option("--index", index, "when the case file is a list: which object")->check(CLI::NonNegativeNumber);
  if (!parse_args(app, argc, argv)) return 0;
  if (template_file.empty() && model.empty()) throw Error("give --template FILE or -m MODEL");

  json c;
  try {
    c = json::parse(read_text_file(case_file));
  } catch (const json::exception& e) {
    throw Error(case_file + ": " + e.what());
  }
  if (c.is_array()) {
    if (index < 0 || size_t(index) >= c.size())
      throw Error(case_file + " holds " + std::to_string(c.size()) + " cases: choose one with --index");
    c = c[size_t(index)];
  }
  if (!c.is_object() || !c.contains("messages")) throw Error(case_file + ": a case is an object with 'messages'");

  std::string source, bos, eos;
  if (!model.empty()) {
    const auto file = gguf::File::open(model, gguf::LoadMode::Mmap);
    const auto src = gguf_chat_template(*file, name);
    if (!src) throw Error(model + " has no tokenizer.chat_template" + (name.empty() ? "" : "." + name));
    source = *src;
    const auto tok = Tokenizer::from_gguf(*file);
    bos = token_text(*tok, tok->bos());
    eos = token_text(*tok, tok->eos());
  } else {
    source = read_text_file(template_file);
  }
  bos = text(c, "bos_token", bos);
  eos = text(c, "eos_token", eos);
  const JinjaChatTemplate tmpl = c.contains("template_caps") && c["template_caps"].is_object()
                                     ? JinjaChatTemplate(source, bos, eos, caps_from(c["template_caps"]))
                                     : JinjaChatTemplate(source, bos, eos);
  ChatTemplateInputs in;
  in.messages = c["messages"];
  in.tools = c.value("tools", json());
  in.add_generation_prompt = flag(c, "add_generation_prompt", true);
  in.enable_thinking = flag(c, "enable_thinking", true);
  in.kwargs = c.value("chat_template_kwargs", json::object());
  in.now = c.contains("now_utc") ? parse_utc(text(c, "now_utc", "")) : local_now();
  const std::string prompt = tmpl.apply(in);
  std::fwrite(prompt.data(), 1, prompt.size(), stdout);
  return 0;
}

}  // namespace

HART_COMMAND(template, "render a conversation through a Jinja chat template", cmd_template);

}  // namespace hart::cli
