// What Python does with a value as a sequence: iterate it, measure it, order it.
#include "chat/jinja/builtins.h"
#include "common/error.h"

namespace hart::jinja {

std::vector<std::string> code_points(const std::string& s) {
  std::vector<std::string> out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    if (i + n > s.size()) n = 1;
    out.push_back(s.substr(i, n));
    i += n;
  }
  return out;
}

List iterate(const Value& v) {
  if (v.is_list()) return v.as_list();  // a copy: appending while looping cannot loop forever
  if (v.is_undefined() || v.is_none()) return {};  // llama.cpp is as lenient with none
  if (v.is_dict()) {
    List keys;
    for (const auto& e : v.as_dict().items) keys.push_back(e.key_value());
    return keys;
  }
  if (v.is_string()) {
    List chars;
    for (auto& c : code_points(v.as_string())) chars.emplace_back(std::move(c));
    return chars;
  }
  throw Error("'" + v.type_name() + "' object is not iterable");
}

size_t length(const Value& v) {
  if (v.is_string()) {
    size_t n = 0;
    for (char c : v.as_string()) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return n;
  }
  if (v.is_list()) return v.as_list().size();
  if (v.is_dict()) return v.as_dict().items.size();
  if (v.is_undefined()) return 0;
  throw Error("object of type '" + v.type_name() + "' has no len()");
}

int compare(const Value& a, const Value& b, int depth) {
  if (depth > kMaxNesting) throw Error("values nested too deeply to compare");
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) {
      const double x = a.as_double(), y = b.as_double();
      return x < y ? -1 : x > y ? 1 : 0;
    }
    const int64_t x = a.as_int(), y = b.as_int();
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.is_string() && b.is_string()) {
    const int c = a.as_string().compare(b.as_string());
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  if (a.is_list() && b.is_list()) {
    const List &x = a.as_list(), &y = b.as_list();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i)
      if (const int c = compare(x[i], y[i], depth + 1)) return c;
    return x.size() < y.size() ? -1 : x.size() > y.size() ? 1 : 0;
  }
  throw Error("'<' not supported between '" + a.type_name() + "' and '" + b.type_name() + "'");
}

}  // namespace hart::jinja
