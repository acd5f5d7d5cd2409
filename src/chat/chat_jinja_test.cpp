// Every case of ../shared/testdata/chat_templates/cases.json: the prompt llama-server renders
// for a real model's template and conversation, which hart must reproduce byte for byte (or
// fail where llama.cpp failed, with the template's own message).
#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>

#include "chat/chat_jinja.h"
#include "chat/chat_testing.h"
#include "common/error.h"
#include "common/testdata.h"

namespace hart {
namespace {

using json = nlohmann::ordered_json;

using chat_testing::read_file;

ChatTemplateCaps caps_of(const json& c) {
  ChatTemplateCaps caps;
  caps.system_role = c.at("supports_system_role");
  caps.tools = c.at("supports_tools");
  caps.tool_calls = c.at("supports_tool_calls");
  caps.object_arguments = c.at("supports_object_arguments");
  caps.string_content = c.at("supports_string_content");
  caps.typed_content = c.at("supports_typed_content");
  return caps;
}

// 2025-01-15 12:00 UTC, the clock the cases were rendered with.
std::tm pinned_now() {
  std::tm t{};
  t.tm_year = 125;
  t.tm_mon = 0;
  t.tm_mday = 15;
  t.tm_hour = 12;
  t.tm_wday = 3;
  t.tm_yday = 14;
  return t;
}

ChatTemplateInputs inputs_of(const json& c) {
  ChatTemplateInputs in;
  in.messages = c.at("messages");
  in.tools = c.at("tools");
  in.add_generation_prompt = c.at("add_generation_prompt");
  in.enable_thinking = c.at("enable_thinking");
  in.kwargs = c.at("chat_template_kwargs");
  in.now = pinned_now();
  return in;
}

// Where two strings first differ, with some context, for a readable failure.
std::string first_difference(const std::string& want, const std::string& got) {
  size_t i = 0;
  while (i < want.size() && i < got.size() && want[i] == got[i]) ++i;
  const size_t from = i > 60 ? i - 60 : 0;
  const auto quoted = [](const std::string& s) { return json(s).dump(-1, ' ', false, json::error_handler_t::replace); };
  return "at byte " + std::to_string(i) + "\n  want: " + quoted(want.substr(from, 160)) +
         "\n  got:  " + quoted(got.substr(from, 160));
}

TEST(JinjaChatTemplate, EveryLlamaCppCase) {
  HART_REQUIRE_TESTDATA(dir, "chat_templates");
  const json cases = json::parse(read_file(dir + "/cases.json"));
  ASSERT_GT(cases.size(), 300u);
  int passed = 0;
  for (const json& c : cases) {
    const std::string name = c.at("template_file").get<std::string>() + " / " + c.at("case").get<std::string>();
    SCOPED_TRACE(name);
    std::string got, error;
    try {
      JinjaChatTemplate t(read_file(dir + "/templates/" + c.at("template_file").get<std::string>()), c.at("bos_token"),
                          c.at("eos_token"), caps_of(c.at("template_caps")));
      got = t.apply(inputs_of(c));
    } catch (const std::exception& e) {
      error = e.what();
    }
    if (c.contains("expected")) {
      if (!error.empty()) ADD_FAILURE() << "failed: " << error;
      else if (got != c.at("expected").get<std::string>()) ADD_FAILURE() << first_difference(c.at("expected"), got);
      else ++passed;
    } else {
      // llama.cpp's message ends with the template's own: "Error: Jinja Exception: <message>".
      const std::string want = c.at("error");
      const std::string msg = want.substr(want.rfind("Jinja Exception: ") + 17);
      if (error.empty()) ADD_FAILURE() << "rendered, but llama.cpp failed with: " << msg;
      else if (error != msg) ADD_FAILURE() << "failed with \"" << error << "\", llama.cpp with \"" << msg << "\"";
      else ++passed;
    }
  }
  std::printf("chat template cases: %d of %zu pass\n", passed, cases.size());
}

// The probed capabilities agree with what llama.cpp detected for every template.
TEST(JinjaChatTemplate, CapabilitiesMatchLlamaCpp) {
  HART_REQUIRE_TESTDATA(dir, "chat_templates");
  const json cases = json::parse(read_file(dir + "/cases.json"));
  std::map<std::string, json> caps;
  for (const json& c : cases) caps[c.at("template_file")] = c.at("template_caps");
  for (const auto& [file, want] : caps) {
    SCOPED_TRACE(file);
    const JinjaChatTemplate t(read_file(dir + "/templates/" + file), "<s>", "</s>");
    const ChatTemplateCaps w = caps_of(want), &g = t.caps();
    EXPECT_EQ(g.system_role, w.system_role) << "system_role";
    EXPECT_EQ(g.tools, w.tools) << "tools";
    EXPECT_EQ(g.tool_calls, w.tool_calls) << "tool_calls";
    EXPECT_EQ(g.object_arguments, w.object_arguments) << "object_arguments";
    EXPECT_EQ(g.string_content, w.string_content) << "string_content";
    // llama.cpp decides typed content by how the template touches a string content; here, by
    // whether a list of parts renders as text. These two render parts well, but llama.cpp's rule
    // says no (Ministral's parts come from llama.cpp's own rewrite either way).
    const bool known_difference = file == "LFM2.5-8B-A1B.jinja" || file == "mistralai-Ministral-3-14B-Reasoning-2512.jinja";
    if (!known_difference) EXPECT_EQ(g.typed_content, w.typed_content) << "typed_content";
    else EXPECT_TRUE(g.typed_content);
  }
}

// SOURCE_DATE_EPOCH fixes the time templates see (UTC): the serve tests that ask twice and
// compare use it, since a template that prints the date (gpt-oss, Llama 3.2, Mistral Small 3.2,
// Granite 3.3, Apertus) renders another prompt once midnight passes between two requests.
TEST(JinjaChatTemplate, SourceDateEpochFixesTheTime) {
  ASSERT_EQ(setenv("SOURCE_DATE_EPOCH", "1700000000", 1), 0);  // 2023-11-14 22:13:20 UTC
  std::tm t = local_now();
  EXPECT_EQ(t.tm_year, 123);
  EXPECT_EQ(t.tm_mon, 10);
  EXPECT_EQ(t.tm_mday, 14);
  EXPECT_EQ(t.tm_hour, 22);
  for (const char* bad : {"", "12x", "-5", "99999999999999999999999"}) {
    ASSERT_EQ(setenv("SOURCE_DATE_EPOCH", bad, 1), 0);
    EXPECT_THROW(local_now(), Error) << "'" << bad << "'";
  }
  ASSERT_EQ(unsetenv("SOURCE_DATE_EPOCH"), 0);
  t = local_now();
  EXPECT_GE(t.tm_year, 125);  // the clock again (2025 or later)
}

}  // namespace
}  // namespace hart
