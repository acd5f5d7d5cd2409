#include "grammar/json_schema.h"

#include "grammar/json_pattern.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

namespace hart::grammar {
namespace {

using Json = nlohmann::ordered_json;

// The value grammar every schema builds on: what JSON and Gemma 4's notation share, then each
// one's whitespace, strings and keys. JSON's whitespace between tokens is bounded (as in
// llama.cpp) so that a model cannot stall in it forever.
constexpr const char* kValues = R"(boolean ::= ("true" | "false") space
null ::= "null" space
integral-part ::= [0] | [1-9] [0-9]{0,15}
decimal-part ::= [0-9]{1,16}
integer ::= "-"? integral-part space
number ::= "-"? integral-part ("." decimal-part)? ([eE] [-+]? integral-part)? space
value ::= object | array | string | number | boolean | null
object ::= "{" space (key ":" space value ("," space key ":" space value)*)? "}" space
array ::= "[" space (value ("," space value)*)? "]" space
)";
constexpr const char* kJsonTokens = R"(space ::= | " " | "\n" [ \t]{0,20}
char ::= [^"\\\x7F\x00-\x1F] | [\\] (["\\bfnrt/] | "u" [0-9a-fA-F]{4})
string ::= "\"" char* "\"" space
key ::= string
)";
// Gemma 4's tool-call notation (its template's format_argument): strings between <|"|> marks
// (here without a '<' inside, so none ends early), bare keys, no whitespace.
constexpr const char* kGemmaTokens = R"(space ::= ""
char ::= [^<]
string ::= "<|\"|>" char* "<|\"|>" space
key ::= [a-zA-Z0-9_-]+ | string
)";
const std::string kPrimitives = std::string(kJsonTokens) + kValues;
const std::string kGemmaPrimitives = std::string(kGemmaTokens) + kValues;

constexpr int kMaxDepth = 64;

// Bounds on numbers: expressed for integers (as digit ranges, as llama.cpp does), refused for
// other numbers and wherever no type says a value is an integer.
constexpr const char* kNumeric[] = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"};

// Integer bounds the grammar can express: magnitudes of up to 15 digits (integral-part allows 16).
constexpr int64_t kMaxBound = 999'999'999'999'999;

// The string formats with a grammar (llama.cpp's set): RFC 3339 dates and times (a leap second
// allowed), UUIDs.
const std::map<std::string, std::string> kFormats = {
    {"date", R"([0-9]{4} "-" ("0" [1-9] | "1" [0-2]) "-" ("0" [1-9] | [12] [0-9] | "3" [01]))"},
    {"time", R"(([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" ([0-5] [0-9] | "60") ("." [0-9]{1,9})? ("Z" | [+-] ([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9]))"},
    {"uuid", R"([0-9a-fA-F]{8} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{12})"}};

// GBNF for the decimal numerals (no sign, no leading zeros) of x .. y, both of n digits.
std::string same_length_range(const std::string& x, const std::string& y) {
  if (x.empty()) return "";
  const auto digits = [](char a, char b) { return a == b ? "\"" + std::string(1, a) + "\"" : "[" + std::string(1, a) + "-" + std::string(1, b) + "]"; };
  const auto any = [](size_t n) { return n == 0 ? std::string() : " [0-9]" + (n == 1 ? std::string() : "{" + std::to_string(n) + "}"); };
  const std::string rx = x.substr(1), ry = y.substr(1);
  if (x[0] == y[0]) return digits(x[0], x[0]) + (rx.empty() ? "" : " " + same_length_range(rx, ry));
  const bool x_low = rx.find_first_not_of('0') == std::string::npos;   // x[0]'s whole decade is in
  const bool y_high = ry.find_first_not_of('9') == std::string::npos;  // so is y[0]'s
  std::vector<std::string> alts;
  if (!x_low) alts.push_back(digits(x[0], x[0]) + " (" + same_length_range(rx, std::string(rx.size(), '9')) + ")");
  const char lo = x_low ? x[0] : char(x[0] + 1), hi = y_high ? y[0] : char(y[0] - 1);
  if (lo <= hi) alts.push_back(digits(lo, hi) + any(rx.size()));
  if (!y_high) alts.push_back(digits(y[0], y[0]) + " (" + same_length_range(std::string(ry.size(), '0'), ry) + ")");
  std::string out;
  for (const std::string& a : alts) out += (out.empty() ? "" : " | ") + a;
  return alts.size() == 1 ? out : "(" + out + ")";
}

// GBNF for the numerals of lo .. hi (hi < 0: no upper bound), lo >= 0, each length on its own.
std::string natural_range(int64_t lo, int64_t hi) {
  const std::string a = std::to_string(lo);
  const size_t top = hi < 0 ? 16 : std::to_string(hi).size();
  std::string out;
  for (size_t n = a.size(); n <= top; n++) {
    std::string x = a;
    if (n > a.size()) x = std::string(n, '0'), x[0] = '1';  // 10...0
    const std::string y = hi >= 0 && n == top ? std::to_string(hi) : std::string(n, '9');
    out += (out.empty() ? "" : " | ") + same_length_range(x, y);
  }
  return "(" + out + ")";
}

// Keywords that say nothing about which values are valid.
const std::set<std::string> kAnnotations = {"title", "description", "$schema", "$id", "$comment", "default",
                                            "examples", "deprecated", "readOnly", "writeOnly", "$defs", "definitions"};

}  // namespace

std::string gbnf_literal(const std::string& bytes) {
  static const char* hex = "0123456789ABCDEF";
  std::string out = "\"";
  for (unsigned char c : bytes) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7F) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

namespace {

std::string gemma_key(const std::string& k);

// A value's text in Gemma 4's notation (for const and enum values).
std::string gemma_text(const Json& v) {
  if (v.is_string()) return "<|\"|>" + v.get<std::string>() + "<|\"|>";
  const bool object = v.is_object();
  if (!object && !v.is_array()) return v.dump();
  std::string out = object ? "{" : "[";
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (it != v.begin()) out += ",";
    if (object) out += gemma_key(it.key()) + ":";
    out += gemma_text(*it);
  }
  return out + (object ? "}" : "]");
}

// A key as Gemma 4 writes it: bare when it is a name, else quoted.
std::string gemma_key(const std::string& k) {
  const bool bare = !k.empty() && std::all_of(k.begin(), k.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
  return bare ? k : gemma_text(Json(k));
}

// What a notation changes: its primitives, a string's delimiters (GBNF), and the text of a value
// and of a given key.
struct Syntax {
  const std::string& primitives;
  std::string quote;
  std::string (*text)(const Json&);
  std::string (*key)(const std::string&);
};
const Syntax kJsonSyntax{kPrimitives, "\"\\\"\"", [](const Json& v) { return v.dump(); },
                         [](const std::string& k) { return Json(k).dump(); }};
const Syntax kGemmaSyntax{kGemmaPrimitives, "\"<|\\\"|>\"", gemma_text, gemma_key};

const Syntax& syntax_of(ValueNotation n) { return n == ValueNotation::GEMMA4 ? kGemmaSyntax : kJsonSyntax; }

// One schema's rules (without the primitives); its helper rules are named prefix + a number.
class Converter {
 public:
  Converter(const Json& root, std::string prefix, const Syntax& syntax = kJsonSyntax)
      : root_(root), prefix_(std::move(prefix)), syntax_(syntax) {}

  std::string run(const std::string& rule) {
    const std::string top = visit(root_, "", 0);
    out_ += rule + " ::= " + top + "\n";
    return out_;
  }

 private:
  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw SchemaError("json_schema: " + what + (where.empty() ? "" : " (at " + where + ")"));
  }

  std::string new_rule(const std::string& body) {
    const std::string name = prefix_ + std::to_string(++n_rules_);
    out_ += name + " ::= " + body + "\n";
    return name;
  }

  // The GBNF expression (a rule name or literal group) for values valid under schema `s`.
  std::string visit(const Json& s, const std::string& where, int depth) {
    if (depth > kMaxDepth) fail(where, "the schema nests deeper than " + std::to_string(kMaxDepth) + " levels");
    if (s.is_boolean()) {
      if (!s.get<bool>()) fail(where, "the schema 'false' allows no value");
      return "value";
    }
    if (!s.is_object()) fail(where, "a schema must be an object or a boolean");
    for (const auto& [k, v] : s.items())
      if (!kAnnotations.count(k) && !kHandled.count(k)) fail(where, "unsupported keyword '" + k + "'");

    if (auto r = s.find("$ref"); r != s.end()) {
      if (s.size() > 1)
        for (const auto& [k, v] : s.items())
          if (k != "$ref" && !kAnnotations.count(k)) fail(where, "'$ref' beside '" + k + "' is not supported");
      return ref(*r, where, depth);
    }
    if (auto c = s.find("const"); c != s.end()) return only(s, "const", where, "(" + gbnf_literal(syntax_.text(*c)) + " space)");
    if (auto e = s.find("enum"); e != s.end()) {
      if (!e->is_array() || e->empty()) fail(where + "/enum", "'enum' must be a non-empty array");
      std::string alts;
      for (const Json& v : *e) alts += (alts.empty() ? "" : " | ") + gbnf_literal(syntax_.text(v));
      return only(s, "enum", where, "((" + alts + ") space)");
    }
    for (const char* k : {"anyOf", "oneOf"})
      if (auto a = s.find(k); a != s.end()) return union_of(s, k, *a, where, depth);

    auto t = s.find("type");
    if (t == s.end()) {
      for (const char* k : kNumeric)
        if (s.contains(k)) fail(where, "unsupported keyword '" + std::string(k) + "'");
      for (const char* k : {"properties", "additionalProperties", "required"})
        if (s.contains(k)) return object(s, where, depth);
      for (const char* k : {"items", "minItems", "maxItems"})
        if (s.contains(k)) return array(s, where, depth);
      for (const char* k : {"minLength", "maxLength", "format", "pattern"})
        if (s.contains(k)) return string(s, where);
      return "value";
    }
    if (t->is_string()) return typed(s, t->get<std::string>(), where, depth);
    if (!t->is_array() || t->empty()) fail(where + "/type", "'type' must be a string or a non-empty array of strings");
    std::string alts;
    for (const Json& one : *t) {
      if (!one.is_string()) fail(where + "/type", "'type' must be a string or a non-empty array of strings");
      alts += (alts.empty() ? "" : " | ") + typed(s, one.get<std::string>(), where, depth);
    }
    return new_rule(alts);
  }

  // `keyword` (const / enum) leaves nothing for other constraints to add; refuse them rather
  // than check that the listed values meet them.
  std::string only(const Json& s, const char* keyword, const std::string& where, std::string expr) {
    for (const auto& [k, v] : s.items())
      if (k != keyword && k != "type" && !kAnnotations.count(k)) fail(where, "'" + k + "' beside '" + keyword + "' is not supported");
    return expr;
  }

  std::string typed(const Json& s, const std::string& type, const std::string& where, int depth) {
    if (type == "object") return object(s, where, depth);
    if (type == "array") return array(s, where, depth);
    if (type == "string") return string(s, where);
    if ((type == "integer" || type == "number") && s.contains("format"))  // int32, double, ...
      fail(where, "'format' is supported on strings only");
    if (type == "integer") return integer(s, where);
    if (type == "number" || type == "boolean" || type == "null") {
      for (const char* k : kNumeric)
        if (s.contains(k)) fail(where, "unsupported keyword '" + std::string(k) + "'");
      return type;
    }
    fail(where + "/type", "unknown type '" + type + "'");
  }

  std::string ref(const Json& r, const std::string& where, int depth) {
    if (!r.is_string()) fail(where + "/$ref", "'$ref' must be a string");
    const std::string target = r.get<std::string>();
    if (auto it = refs_.find(target); it != refs_.end()) return it->second;
    if (target.rfind("#", 0) != 0) fail(where + "/$ref", "only local references ('#/...') are supported, not '" + target + "'");
    const Json* node = &root_;
    try {
      if (target.size() > 1) node = &root_.at(Json::json_pointer(target.substr(1)));
    } catch (const nlohmann::json::exception&) {
      fail(where + "/$ref", "'" + target + "' does not point into the schema");
    }
    // Named before its body so that a recursive schema refers to itself.
    const std::string name = prefix_ + std::to_string(++n_rules_);
    refs_[target] = name;
    const std::string body = visit(*node, target.substr(1), depth + 1);
    out_ += name + " ::= " + body + "\n";
    return name;
  }

  std::string union_of(const Json& s, const char* keyword, const Json& branches, const std::string& where, int depth) {
    const std::string at = where + "/" + keyword;
    if (!branches.is_array() || branches.empty()) fail(at, "'" + std::string(keyword) + "' must be a non-empty array");
    for (const auto& [k, v] : s.items())
      if (k != keyword && !kAnnotations.count(k)) fail(where, "'" + k + "' beside '" + keyword + "' is not supported");
    if (std::string(keyword) == "oneOf") require_disjoint(branches, at);
    std::string alts;
    for (size_t i = 0; i < branches.size(); i++)
      alts += (alts.empty() ? "" : " | ") + visit(branches[i], at + "/" + std::to_string(i), depth + 1);
    return new_rule(alts);
  }

  // oneOf needs exactly one branch to match. The grammar is a union, so that holds only when
  // no value can match two branches: accept branches of different single types, or of
  // const / enum values no other branch lists.
  void require_disjoint(const Json& branches, const std::string& at) {
    std::set<std::string> types, values;
    bool by_type = true, by_value = true;
    for (const Json& b : branches) {
      const Json* t = b.is_object() && b.contains("type") && b.at("type").is_string() ? &b.at("type") : nullptr;
      by_type = by_type && t && types.insert(t->get<std::string>() == "integer" ? "number" : t->get<std::string>()).second;
      const Json* list = !b.is_object() ? nullptr : b.contains("const") ? &b.at("const") : b.contains("enum") ? &b.at("enum") : nullptr;
      if (!list) {
        by_value = false;
      } else if (b.contains("const")) {
        by_value = by_value && values.insert(list->dump()).second;
      } else if (list->is_array()) {
        for (const Json& v : *list) by_value = by_value && values.insert(v.dump()).second;
      }
    }
    if (!by_type && !by_value)
      fail(at, "'oneOf' whose branches may overlap is not supported (give each branch a different type or const, or use anyOf)");
  }

  // An integer within minimum / maximum (exclusive bounds moved one in; fractional ones rounded
  // inward); multipleOf is refused.
  std::string integer(const Json& s, const std::string& where) {
    if (s.contains("multipleOf")) fail(where, "unsupported keyword 'multipleOf'");
    std::optional<int64_t> lo, hi;
    const auto bound = [&](const char* key, bool upper, bool exclusive) {
      auto it = s.find(key);
      if (it == s.end()) return;
      if (!it->is_number()) fail(where + "/" + key, "'" + std::string(key) + "' must be a number");
      const double v = it->get<double>();
      if (std::fabs(v) > double(kMaxBound))
        fail(where + "/" + key, "'" + std::string(key) + "' beyond 15 digits is not supported");
      const int64_t b = upper ? int64_t(std::floor(v)) - (exclusive && std::floor(v) == v)
                              : int64_t(std::ceil(v)) + (exclusive && std::ceil(v) == v);
      std::optional<int64_t>& slot = upper ? hi : lo;
      slot = slot ? (upper ? std::min(*slot, b) : std::max(*slot, b)) : b;
    };
    bound("minimum", false, false);
    bound("exclusiveMinimum", false, true);
    bound("maximum", true, false);
    bound("exclusiveMaximum", true, true);
    if (!lo && !hi) return "integer";
    if (lo && hi && *lo > *hi) fail(where, "no integer lies within 'minimum' and 'maximum'");
    std::vector<std::string> alts;
    if (!lo || *lo < 0) {  // the negatives: "-" and the magnitudes -min(hi, -1) .. -lo
      const int64_t mag_lo = hi && *hi < 0 ? -*hi : 1;
      alts.push_back("\"-\" " + natural_range(mag_lo, lo ? -*lo : -1));
    }
    if (!hi || *hi >= 0) alts.push_back(natural_range(lo && *lo > 0 ? *lo : 0, hi ? *hi : -1));
    std::string body;
    for (const std::string& a : alts) body += (body.empty() ? "" : " | ") + a;
    return new_rule("(" + body + ") space");
  }

  std::string string(const Json& s, const std::string& where) {
    if (auto p = s.find("pattern"); p != s.end()) {
      if (!p->is_string()) fail(where + "/pattern", "'pattern' must be a string");
      for (const char* k : {"minLength", "maxLength", "format"})
        if (s.contains(k)) fail(where, "'" + std::string(k) + "' beside 'pattern' is not supported");
      if (&syntax_.primitives != &kPrimitives) fail(where, "'pattern' outside JSON text is not supported");
      try {
        return new_rule("\"\\\"\" " + pattern_to_gbnf(p->get<std::string>()) + " \"\\\"\" space");
      } catch (const SchemaError& e) {
        fail(where + "/pattern", std::string(e.what()).substr(13));  // without its "json_schema: "
      }
    }
    if (auto f = s.find("format"); f != s.end()) {
      if (!f->is_string()) fail(where + "/format", "'format' must be a string");
      for (const char* k : {"minLength", "maxLength"})
        if (s.contains(k)) fail(where, "'" + std::string(k) + "' beside 'format' is not supported");
      const std::string name = f->get<std::string>();
      std::string body;
      if (name == "date-time") body = kFormats.at("date") + " \"T\" " + kFormats.at("time");
      else if (auto it = kFormats.find(name); it != kFormats.end()) body = it->second;
      else fail(where + "/format", "unsupported format '" + name + "' (supported: date, time, date-time, uuid)");
      return new_rule(syntax_.quote + " " + body + " " + syntax_.quote + " space");
    }
    const uint64_t lo = count(s, "minLength", where, 0);
    const uint64_t hi = count(s, "maxLength", where, UINT64_MAX);
    if (hi < lo) fail(where, "'maxLength' is below 'minLength'");
    if (lo == 0 && hi == UINT64_MAX) return "string";
    return new_rule(syntax_.quote + " char" + repeat(lo, hi) + " " + syntax_.quote + " space");
  }

  std::string array(const Json& s, const std::string& where, int depth) {
    std::string item = "value";
    if (auto it = s.find("items"); it != s.end()) item = visit(*it, where + "/items", depth + 1);
    const uint64_t lo = count(s, "minItems", where, 0);
    const uint64_t hi = count(s, "maxItems", where, UINT64_MAX);
    if (hi < lo) fail(where, "'maxItems' is below 'minItems'");
    if (hi == 0) return new_rule("\"[\" space \"]\" space");
    const std::string more = "(\",\" space " + item + ")" + repeat(lo == 0 ? 0 : lo - 1, hi == UINT64_MAX ? hi : hi - 1);
    const std::string items = item + " " + more;
    return new_rule("\"[\" space " + (lo == 0 ? "(" + items + ")?" : items) + " \"]\" space");
  }

  std::string object(const Json& s, const std::string& where, int depth) {
    std::vector<std::pair<std::string, std::string>> props;  // (name, value expression)
    if (auto p = s.find("properties"); p != s.end()) {
      if (!p->is_object()) fail(where + "/properties", "'properties' must be an object");
      for (const auto& [name, sub] : p->items()) props.emplace_back(name, visit(sub, where + "/properties/" + name, depth + 1));
    }
    std::set<std::string> required;
    if (auto r = s.find("required"); r != s.end()) {
      if (!r->is_array()) fail(where + "/required", "'required' must be an array of strings");
      for (const Json& n : *r) {
        if (!n.is_string()) fail(where + "/required", "'required' must be an array of strings");
        required.insert(n.get<std::string>());
      }
    }
    for (const std::string& n : required) {
      bool known = false;
      for (const auto& p : props) known = known || p.first == n;
      if (!known) fail(where + "/required", "required property '" + n + "' has no schema in 'properties'");
    }
    std::string extra;  // the value of additional properties, or "" for none
    if (auto a = s.find("additionalProperties"); a != s.end() && !(a->is_boolean() && !a->get<bool>())) {
      // Keys outside `properties` would need a grammar for "any string but these": refused
      // rather than risk a duplicate of a listed key with a value its schema forbids.
      if (!props.empty()) fail(where, "'additionalProperties' beside 'properties' is not supported");
      extra = visit(*a, where + "/additionalProperties", depth + 1);
    }
    if (props.empty()) {
      if (extra.empty()) return new_rule("\"{\" space \"}\" space");
      const std::string kv = "key \":\" space " + extra;
      return new_rule("\"{\" space (" + kv + " (\",\" space " + kv + ")*)? \"}\" space");
    }
    // The properties in schema order, each present or (if not required) absent, with commas
    // only between present ones: first_i (nothing written yet) and rest_i (something written).
    const size_t n = props.size();
    std::vector<std::string> kv(n), rest(n + 1), first(n + 1);
    for (size_t i = 0; i < n; i++) kv[i] = gbnf_literal(syntax_.key(props[i].first)) + " space \":\" space " + props[i].second;
    rest[n] = first[n] = "";
    for (size_t i = n; i-- > 0;) {
      const bool req = required.count(props[i].first) > 0;
      const std::string after = rest[i + 1].empty() ? "" : " " + rest[i + 1];
      rest[i] = new_rule(req ? "\",\" space " + kv[i] + after : "(\",\" space " + kv[i] + ")?" + after);
      const std::string start = kv[i] + after;
      first[i] = new_rule(req ? start : first[i + 1].empty() ? "(" + start + ")?" : start + " | " + first[i + 1]);
    }
    return new_rule("\"{\" space " + first[0] + " \"}\" space");
  }

  uint64_t count(const Json& s, const char* key, const std::string& where, uint64_t absent) {
    auto it = s.find(key);
    if (it == s.end()) return absent;
    if (!it->is_number_unsigned() && !(it->is_number_integer() && it->get<int64_t>() >= 0))
      fail(where + "/" + key, "'" + std::string(key) + "' must be a non-negative integer");
    const uint64_t v = it->get<uint64_t>();
    if (v > 10000) fail(where + "/" + key, "'" + std::string(key) + "' above 10000 is not supported");
    return v;
  }

  static std::string repeat(uint64_t lo, uint64_t hi) {
    if (lo == 0 && hi == UINT64_MAX) return "*";
    if (lo == 1 && hi == UINT64_MAX) return "+";
    if (hi == UINT64_MAX) return "{" + std::to_string(lo) + ",}";
    return "{" + std::to_string(lo) + "," + std::to_string(hi) + "}";
  }

  static inline const std::set<std::string> kHandled = {
      "type", "properties", "required", "additionalProperties", "enum", "const", "items", "minItems", "maxItems",
      "anyOf", "oneOf", "$ref", "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum",
      "exclusiveMaximum", "multipleOf", "format", "pattern"};

  const Json& root_;
  const std::string prefix_;
  const Syntax& syntax_;
  std::string out_;
  int n_rules_ = 0;
  std::map<std::string, std::string> refs_;
};

}  // namespace

std::string json_schema_to_gbnf(const nlohmann::ordered_json& schema, const std::string& rule) {
  return kPrimitives + Converter(schema, "s").run(rule);
}

std::string json_schemas_to_gbnf(const std::vector<std::pair<std::string, nlohmann::ordered_json>>& rules,
                                 ValueNotation notation) {
  const Syntax& syntax = syntax_of(notation);
  std::string out = syntax.primitives;
  for (size_t i = 0; i < rules.size(); i++) {
    char prefix[32];  // helper rules of schema i: s<i>-<n>
    std::snprintf(prefix, sizeof prefix, "s%zu-", i);
    out += Converter(rules[i].second, prefix, syntax).run(rules[i].first);
  }
  return out;
}

std::string json_object_gbnf() { return kPrimitives + "root ::= object\n"; }

}  // namespace hart::grammar
