// The template engine on its own: Jinja semantics chat templates rely on, and bad templates
// failing with a clear hart::Error instead of crashing or hanging.
#include <gtest/gtest.h>

#include <fstream>

#include "chat/jinja/template.h"
#include "common/error.h"

namespace hart::jinja {
namespace {

using json = nlohmann::ordered_json;

std::string r(const std::string& src, const json& ctx = json::object()) { return Template(src).render(ctx, std::tm{}); }

std::string error_of(const std::string& src, const json& ctx = json::object()) {
  try {
    r(src, ctx);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Jinja, WhitespaceControlAndBlockTrimming) {
  EXPECT_EQ(r("a  {{- 'b' -}}  c"), "abc");
  EXPECT_EQ(r("{% if true %}\nx\n{% endif %}\n"), "x\n");  // trim_blocks, and the final newline goes
  EXPECT_EQ(r("  {% if true %}x{% endif %}"), "x");      // lstrip_blocks
  EXPECT_EQ(r("  {{ 'x' }}"), "  x");                     // not for {{
  EXPECT_EQ(r("a\r\nb"), "a\nb");
  EXPECT_EQ(r("{# note #}\nx"), "x");
  EXPECT_EQ(r("{% raw %}{{ not evaluated }}{% endraw %}"), "{{ not evaluated }}");
}

TEST(Jinja, LoopsAndScopes) {
  EXPECT_EQ(r("{% for x in [1,2,3] %}{{ loop.index }}{{ loop.first }}{{ loop.last }}{{ loop.length }},{% endfor %}"),
            "1TrueFalse3,2FalseFalse3,3FalseTrue3,");
  EXPECT_EQ(r("{% for x in [1,2,3,4] if x is even %}{{ loop.index0 }}:{{ x }} {% endfor %}"), "0:2 1:4 ");
  EXPECT_EQ(r("{% for x in [] %}a{% else %}empty{% endfor %}"), "empty");
  EXPECT_EQ(r("{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }};{% endfor %}"), "a=1;b=2;");
  EXPECT_EQ(r("{% for x in [1,2,3] %}{% if x == 2 %}{% break %}{% endif %}{{ x }}{% endfor %}"), "1");
  // set inside a loop stays there; a namespace carries the value out.
  EXPECT_EQ(r("{% set n = 0 %}{% for x in [1,2] %}{% set n = n + x %}{% endfor %}{{ n }}"), "0");
  EXPECT_EQ(r("{% set ns = namespace(n=0) %}{% for x in [1,2] %}{% set ns.n = ns.n + x %}{% endfor %}{{ ns.n }}"), "3");
  EXPECT_EQ(r("{% set l = [] %}{% for x in [1,2] %}{% set _ = l.append(x * 10) %}{% endfor %}{{ l }}"), "[10, 20]");
}

TEST(Jinja, MacrosAndCalls) {
  EXPECT_EQ(r("{% macro m(a, b='d') %}[{{ a }}{{ b }}]{% endmacro %}{{ m(1) }}{{ m(1, b=2) }}"), "[1d][12]");
  EXPECT_EQ(r("{% macro w() %}<{{ caller() }}>{% endmacro %}{% call w() %}in{% endcall %}"), "<in>");
  EXPECT_EQ(r("{% set x %}a{{ 1 + 1 }}{% endset %}{{ x }}"), "a2");
  EXPECT_EQ(r("{% filter upper %}abc{% endfilter %}"), "ABC");
}

TEST(Jinja, ExpressionsAsPython) {
  EXPECT_EQ(r("{{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 7 / 2 }} {{ 2 ** 10 }} {{ 1 ~ 'a' }}"), "3 -4 2 3.5 1024 1a");
  EXPECT_EQ(r("{{ 'abcdef'[1:3] }} {{ 'abc'[::-1] }} {{ [1,2,3][-1] }} {{ [1,2,3,4][1:] }}"), "bc cba 3 [2, 3, 4]");
  EXPECT_EQ(r("{{ 'a' if false else 'b' }}{{ 'x' if false }}|{{ none }}|{{ true }}"), "b|None|True");
  EXPECT_EQ(r("{{ 'b' in 'abc' }} {{ 2 not in [1, 2] }} {{ 'k' in {'k': 1} }}"), "True False True");
  EXPECT_EQ(r("{{ {'a': [1, 'x', none, 1.5]} }}"), "{'a': [1, 'x', None, 1.5]}");
  EXPECT_EQ(r("{{ x.y.z is defined }} {{ x is undefined }} {{ 3 is divisibleby 3 }} {{ 'a' is string }}"), "False True True True");
  EXPECT_EQ(r("{{ 0 or 'a' }} {{ 1 and 'b' }}"), "a b");
  EXPECT_EQ(r("{{ '%s=%d%%' % ('x', 5) }} {{ 'v%s' % 1 }}"), "x=5% v1");
}

TEST(Jinja, StringAndContainerMethods) {
  EXPECT_EQ(r("{{ '  a b  '.strip() }}|{{ 'xxaxx'.lstrip('x') }}|{{ 'a,b,,c'.split(',') }}|{{ ' a  b '.split() }}"),
            "a b|axx|['a', 'b', '', 'c']|['a', 'b']");
  EXPECT_EQ(r("{{ 'abc'.startswith(('x', 'a')) }} {{ 'abc'.endswith('bc') }} {{ 'aXa'.replace('a', 'b') }} {{ 'ab'.upper() }}"),
            "True True bXb AB");
  EXPECT_EQ(r("{{ d.get('a') }} {{ d.get('z', 5) }} {{ d.keys() | list }} {{ d | length }}", {{"d", {{"a", 1}}}}),
            "1 5 ['a'] 1");
  EXPECT_EQ(r("{{ '{} and {name}'.format(1, name='x') }}"), "1 and x");
}

TEST(Jinja, Filters) {
  const json ctx{{"xs", json::array({{{"n", "a"}, {"on", true}}, {{"n", "b"}, {"on", false}}})}};
  EXPECT_EQ(r("{{ xs | selectattr('on') | map(attribute='n') | join(',') }}", ctx), "a");
  EXPECT_EQ(r("{{ xs | rejectattr('on') | map(attribute='n') | list }}", ctx), "['b']");
  EXPECT_EQ(r("{{ xs | first | tojson }}", ctx), "{\"n\": \"a\", \"on\": true}");
  EXPECT_EQ(r("{{ {'b': 1, 'a': [1, 2]} | tojson(indent=2) }}"), "{\n  \"b\": 1,\n  \"a\": [\n    1,\n    2\n  ]\n}");
  EXPECT_EQ(r("{{ 'é\n' | tojson }} {{ 'é' | tojson(ensure_ascii=true) }}"), "\"é\\n\" \"\\u00e9\"");
  EXPECT_EQ(r("{{ u | default('d') }} {{ '' | default('d', true) }} {{ ' x ' | trim }} {{ 'ab' | capitalize }}"), "d d x Ab");
  EXPECT_EQ(r("{{ '3' | int + 1 }} {{ 'x' | int }} {{ 2 | string ~ 'a' }} {{ [3, 1, 2] | sort }} {{ [1, 1, 2] | unique | list }}"),
            "4 0 2a [1, 2, 3] [1, 2]");
  EXPECT_EQ(r("{{ 'a\nb' | indent(2) }}|{{ 'a' | indent(2, first=true) }}"), "a\n  b|  a");
  EXPECT_EQ(r("{% for k, v in {2: 'b', 1: 'a'} | dictsort %}{{ k + 1 }}{{ v }}{% endfor %}"), "2a3b");
  EXPECT_EQ(r("{{ '{\"a\": [1]}' | from_json }}"), "{'a': [1]}");
}

TEST(Jinja, GlobalsAndRaise) {
  EXPECT_EQ(r("{{ range(3) | list }} {{ range(1, 7, 2) | list }}"), "[0, 1, 2] [1, 3, 5]");
  std::tm t{};
  t.tm_year = 125;
  t.tm_mday = 15;
  EXPECT_EQ(Template("{{ strftime_now('%Y-%m-%d') }}").render(json::object(), t), "2025-01-15");
  try {
    r("{{ raise_exception('No system role') }}");
    FAIL() << "no exception";
  } catch (const RaisedError& e) {
    EXPECT_STREQ(e.what(), "No system role");
  }
}

TEST(Jinja, BadTemplatesFailClearly) {
  EXPECT_EQ(error_of("{% if x %}a"), "template line 1: block is not closed (expected {% endif %})");
  EXPECT_EQ(error_of("a\n{{ 1 + }}"), "template line 2: unexpected '}}'");
  EXPECT_EQ(error_of("{% frobnicate %}"), "template line 1: unknown tag 'frobnicate'");
  EXPECT_EQ(error_of("{{ 'abc }}"), "template line 1: unterminated string");
  EXPECT_EQ(error_of("{{ x | nope }}"), "template line 1: unknown filter 'nope'");
  EXPECT_EQ(error_of("{{ 1 / 0 }}"), "template line 1: division by zero");
  EXPECT_EQ(error_of("{{ nothing() }}"), "template line 1: 'nothing' is undefined");
  EXPECT_EQ(error_of("{{ 9223372036854775807 + 1 }}"), "template line 1: integer overflow in +");
}

TEST(Jinja, RunawayTemplatesAreStopped) {
  EXPECT_NE(error_of("{{ " + std::string(500, '(') + "1" + std::string(500, ')') + " }}").find("nested too deeply"), std::string::npos);
  EXPECT_NE(error_of("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}").find("macro calls nested too deeply"), std::string::npos);
  EXPECT_NE(error_of("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}").find("runs too long"),
            std::string::npos);
  EXPECT_NE(error_of("{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}")
                .find("too large"),
            std::string::npos);
  EXPECT_NE(error_of("{{ 'x' * 100000000000 }}").find("too large"), std::string::npos);
  // A list nested 200000 deep is built, refused when printed, and freed without recursion.
  EXPECT_NE(error_of("{% set ns = namespace(l=[]) %}{% for i in range(200000) %}{% set ns.l = [ns.l] %}{% endfor %}{{ ns.l }}")
                .find("nested too deeply"),
            std::string::npos);
  // Appending while looping walks the list as it was: no endless loop.
  EXPECT_EQ(r("{% set l = [1] %}{% for x in l %}{% set _ = l.append(x) %}{% endfor %}{{ l | length }}"), "2");
}

// Undefined values as llama.cpp's renderer treats them ("..." + undefined is the string, loops
// over undefined run no times, filters on it give empty values), each case's expected output
// rendered by llama.cpp's own engine (undefined_cases.json says how).
TEST(Jinja, UndefinedValuesAsLlamaCppRendersThem) {
  std::ifstream in(HART_JINJA_UNDEFINED_CASES);
  ASSERT_TRUE(in) << HART_JINJA_UNDEFINED_CASES;
  const json doc = json::parse(in);
  ASSERT_GE(doc.at("cases").size(), 25u);
  for (const json& c : doc.at("cases")) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    const std::string src = c.at("template");
    if (c.value("error", false)) {
      EXPECT_NE(error_of(src, c.at("context")), "(no error)");
      continue;
    }
    std::string got;
    try {
      got = r(src, c.at("context"));
    } catch (const Error& e) {
      got = std::string("error: ") + e.what();
    }
    EXPECT_EQ(got, c.at("expected").get<std::string>());
  }
}

}  // namespace
}  // namespace hart::jinja
