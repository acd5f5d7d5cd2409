// The library a template calls into: filters (`x | name(args)`), tests (`x is name(args)`),
// methods of str, list and dict (`x.name(args)`, as Python's), and JSON in and out.
// Each throws hart::Error for a wrong type or argument; the evaluator adds the line.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "chat/jinja/value.h"

namespace hart::jinja {

// Throws for an unknown filter.
Value apply_filter(const std::string& name, const Value& v, const Args& args);
// Throws for an unknown test.
bool apply_test(const std::string& name, const Value& v, const Args& args);
// nullopt-like: returns false (and leaves `out` alone) when `obj` has no such method.
bool call_method(const Value& obj, const std::string& name, const Args& args, Value& out);
bool has_method(const Value& obj, const std::string& name);

// The items a for loop or filter walks: a list's items, a dict's keys, a string's characters
// (UTF-8 code points), nothing for Undefined. Throws for other types.
List iterate(const Value& v);
// len(): code points of a string, items of a list or dict.
size_t length(const Value& v);
// Python's ordering (numbers, strings, lists); throws for anything else.
int compare(const Value& a, const Value& b, int depth = 0);
// A string's code points, each as its UTF-8 bytes.
std::vector<std::string> code_points(const std::string& s);

Value from_json(const nlohmann::ordered_json& j);
struct JsonStyle {
  int indent = -1;  // < 0: one line
  std::string item_sep = ", ";
  std::string key_sep = ": ";
  bool ensure_ascii = false;
  bool sort_keys = false;
};
// Python's json.dumps as Hugging Face's tojson calls it. Undefined and functions are errors.
std::string to_json(const Value& v, const JsonStyle& style);

// A string result longer than this is an error, so a template cannot exhaust memory.
inline constexpr size_t kMaxString = 64u << 20;
void check_size(size_t n);

}  // namespace hart::jinja
