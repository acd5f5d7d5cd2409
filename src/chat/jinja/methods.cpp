// Python's methods of str, list and dict that templates call (`s.strip()`, `d.get(k)`,
// `l.append(x)`, ...). List and dict methods mutate the shared object, as in Python.
#include <algorithm>
#include <cctype>

#include "chat/jinja/builtins.h"
#include "common/error.h"

namespace hart::jinja {
namespace {

const char* const kStringMethods[] = {"strip", "lstrip", "rstrip", "split", "rsplit", "startswith", "endswith",
                                      "upper", "lower", "title", "capitalize", "replace", "find", "rfind", "index",
                                      "count", "join", "format", "splitlines", "isdigit", "isalpha", "isalnum",
                                      "isspace", "islower", "isupper", "removeprefix", "removesuffix"};
const char* const kListMethods[] = {"append", "pop", "insert", "extend", "index", "count", "reverse", "copy",
                                    "remove", "clear"};
const char* const kDictMethods[] = {"get", "items", "keys", "values", "pop", "update", "setdefault", "copy", "clear"};

template <size_t N>
bool listed(const char* const (&names)[N], const std::string& name) {
  return std::any_of(std::begin(names), std::end(names), [&](const char* n) { return name == n; });
}

const std::string kWhitespace = " \t\n\r\f\v";

std::string str_arg(const Args& a, size_t i, const char* name, const std::string& method) {
  const Value* v = a.get(i, name);
  if (!v || !v->is_string()) throw Error(method + "() needs a string argument '" + name + "'");
  return v->as_string();
}

// strip/lstrip/rstrip with Python's optional set of characters.
std::string strip(const std::string& s, const Args& a, bool left, bool right) {
  const Value* c = a.get(0, "chars");
  const std::string chars = c && c->is_string() ? c->as_string() : kWhitespace;
  size_t b = 0, e = s.size();
  if (left)
    while (b < e && chars.find(s[b]) != std::string::npos) ++b;
  if (right)
    while (e > b && chars.find(s[e - 1]) != std::string::npos) --e;
  return s.substr(b, e - b);
}

Value split(const std::string& s, const Args& a, bool from_right) {
  const Value* sepv = a.get(0, "sep");
  const Value* maxv = a.get(1, "maxsplit");
  int64_t max = maxv && maxv->is_int() ? maxv->as_int() : -1;
  std::vector<std::string> parts;
  if (!sepv || sepv->is_none()) {
    // Runs of whitespace separate; leading and trailing whitespace gives no empty parts.
    std::vector<std::pair<size_t, size_t>> words;
    for (size_t i = 0; i < s.size();) {
      while (i < s.size() && kWhitespace.find(s[i]) != std::string::npos) ++i;
      if (i >= s.size()) break;
      size_t j = i;
      while (j < s.size() && kWhitespace.find(s[j]) == std::string::npos) ++j;
      words.emplace_back(i, j);
      i = j;
    }
    if (max >= 0 && static_cast<size_t>(max) + 1 < words.size()) {
      // The last (or, from the right, first) part keeps the rest of the text as it is.
      if (from_right) {
        const size_t keep = words.size() - static_cast<size_t>(max);
        const size_t end = words[keep - 1].second;
        parts.push_back(s.substr(words[0].first, end - words[0].first));
        for (size_t k = keep; k < words.size(); ++k) parts.push_back(s.substr(words[k].first, words[k].second - words[k].first));
      } else {
        for (size_t k = 0; k < static_cast<size_t>(max); ++k)
          parts.push_back(s.substr(words[k].first, words[k].second - words[k].first));
        std::string rest = s.substr(words[static_cast<size_t>(max)].first);
        while (!rest.empty() && kWhitespace.find(rest.back()) != std::string::npos) rest.pop_back();
        parts.push_back(rest);
      }
    } else {
      for (auto [b, e] : words) parts.push_back(s.substr(b, e - b));
    }
  } else {
    if (!sepv->is_string()) throw Error("split() separator must be a string");
    const std::string& sep = sepv->as_string();
    if (sep.empty()) throw Error("split(): empty separator");
    if (!from_right) {
      size_t b = 0;
      for (size_t p; (max < 0 || static_cast<int64_t>(parts.size()) < max) && (p = s.find(sep, b)) != std::string::npos;
           b = p + sep.size())
        parts.push_back(s.substr(b, p - b));
      parts.push_back(s.substr(b));
    } else {
      size_t e = s.size();
      std::vector<std::string> rev;
      while (max < 0 || static_cast<int64_t>(rev.size()) < max) {
        if (e < sep.size()) break;
        const size_t p = s.rfind(sep, e - sep.size());
        if (p == std::string::npos) break;
        rev.push_back(s.substr(p + sep.size(), e - p - sep.size()));
        e = p;
      }
      parts.push_back(s.substr(0, e));
      parts.insert(parts.end(), rev.rbegin(), rev.rend());
    }
  }
  List out;
  for (auto& p : parts) out.emplace_back(std::move(p));
  return Value::list(std::move(out));
}

bool affix(const std::string& s, const Value& arg, bool start) {
  const auto one = [&](const Value& p) {
    if (!p.is_string()) throw Error(std::string(start ? "startswith" : "endswith") + "() needs strings");
    const std::string& x = p.as_string();
    return x.size() <= s.size() && (start ? s.compare(0, x.size(), x) == 0 : s.compare(s.size() - x.size(), x.size(), x) == 0);
  };
  if (arg.is_list()) return std::any_of(arg.as_list().begin(), arg.as_list().end(), one);
  return one(arg);
}

std::string replace(const std::string& s, const std::string& from, const std::string& to, int64_t count) {
  std::string out;
  if (from.empty()) {
    // Python inserts `to` before every character and at the end.
    int64_t n = 0;
    for (const auto& c : code_points(s)) {
      if (count < 0 || n++ < count) out += to;
      out += c;
      check_size(out.size());
    }
    if (count < 0 || n < count) out += to;
    return out;
  }
  size_t b = 0;
  for (size_t p; count != 0 && (p = s.find(from, b)) != std::string::npos; b = p + from.size(), --count) {
    out.append(s, b, p - b);
    out += to;
    check_size(out.size());
  }
  return out + s.substr(b);
}

std::string format(const std::string& f, const Args& a) {
  std::string out;
  size_t next = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] == '{' && i + 1 < f.size() && f[i + 1] == '{') {
      out += '{';
      ++i;
    } else if (f[i] == '}' && i + 1 < f.size() && f[i + 1] == '}') {
      out += '}';
      ++i;
    } else if (f[i] == '{') {
      const size_t close = f.find('}', i);
      if (close == std::string::npos) throw Error("format(): unmatched '{'");
      const std::string field = f.substr(i + 1, close - i - 1);
      const Value* v = nullptr;
      if (field.empty()) {
        v = next < a.pos.size() ? &a.pos[next++] : nullptr;
      } else if (std::all_of(field.begin(), field.end(), ::isdigit)) {
        const size_t k = std::stoul(field);
        v = k < a.pos.size() ? &a.pos[k] : nullptr;
      } else {
        for (const auto& [k, x] : a.kw)
          if (k == field) v = &x;
      }
      if (!v) throw Error("format(): no argument for {" + field + "}");
      out += to_str(*v);
      i = close;
    } else {
      out += f[i];
    }
    check_size(out.size());
  }
  return out;
}

template <class Pred>
bool all_chars(const std::string& s, Pred p) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [&](char c) { return p(static_cast<unsigned char>(c)); });
}

bool string_method(const std::string& s, const std::string& name, const Args& a, Value& out) {
  if (name == "strip") out = strip(s, a, true, true);
  else if (name == "lstrip") out = strip(s, a, true, false);
  else if (name == "rstrip") out = strip(s, a, false, true);
  else if (name == "split") out = split(s, a, false);
  else if (name == "rsplit") out = split(s, a, true);
  else if (name == "startswith" || name == "endswith") {
    if (a.pos.empty()) throw Error(name + "() needs an argument");
    out = affix(s, a.pos[0], name == "startswith");
  } else if (name == "upper" || name == "lower") {
    std::string r = s;
    for (char& c : r) c = static_cast<char>(name == "upper" ? std::toupper(static_cast<unsigned char>(c)) : std::tolower(static_cast<unsigned char>(c)));
    out = std::move(r);
  } else if (name == "title" || name == "capitalize") {
    std::string r = s;
    bool start = true;
    for (char& c : r) {
      const auto u = static_cast<unsigned char>(c);
      c = static_cast<char>(start ? std::toupper(u) : std::tolower(u));
      start = name == "title" ? !std::isalpha(u) : false;
    }
    out = std::move(r);
  } else if (name == "replace") {
    const Value* n = a.get(2, "count");
    out = replace(s, str_arg(a, 0, "old", name), str_arg(a, 1, "new", name), n && n->is_int() ? n->as_int() : -1);
  } else if (name == "find" || name == "rfind" || name == "index") {
    const std::string x = str_arg(a, 0, "sub", name);
    const size_t p = name == "rfind" ? s.rfind(x) : s.find(x);
    if (p == std::string::npos && name == "index") throw Error("index(): substring not found");
    out = p == std::string::npos ? int64_t{-1} : static_cast<int64_t>(p);
  } else if (name == "count") {
    const std::string x = str_arg(a, 0, "sub", name);
    int64_t n = 0;
    if (x.empty()) n = static_cast<int64_t>(code_points(s).size()) + 1;
    else
      for (size_t p = s.find(x); p != std::string::npos; p = s.find(x, p + x.size())) ++n;
    out = n;
  } else if (name == "join") {
    if (a.pos.empty()) throw Error("join() needs an argument");
    std::string r;
    bool first = true;
    for (const Value& x : iterate(a.pos[0])) {
      if (!first) r += s;
      r += to_str(x);
      first = false;
      check_size(r.size());
    }
    out = std::move(r);
  } else if (name == "format") out = format(s, a);
  else if (name == "splitlines") {
    List l;
    size_t b = 0;
    for (size_t p; (p = s.find('\n', b)) != std::string::npos; b = p + 1) l.emplace_back(s.substr(b, p - b));
    if (b < s.size()) l.emplace_back(s.substr(b));
    out = Value::list(std::move(l));
  } else if (name == "isdigit") out = all_chars(s, ::isdigit);
  else if (name == "isalpha") out = all_chars(s, ::isalpha);
  else if (name == "isalnum") out = all_chars(s, ::isalnum);
  else if (name == "isspace") out = all_chars(s, ::isspace);
  else if (name == "islower" || name == "isupper") {
    bool cased = false, ok = true;
    for (char c : s) {
      const auto u = static_cast<unsigned char>(c);
      cased |= std::isalpha(u) != 0;
      if (name == "islower" ? std::isupper(u) : std::islower(u)) ok = false;
    }
    out = cased && ok;
  } else if (name == "removeprefix" || name == "removesuffix") {
    const std::string x = str_arg(a, 0, "affix", name);
    const bool pre = name == "removeprefix";
    out = affix(s, Value(x), pre) ? (pre ? s.substr(x.size()) : s.substr(0, s.size() - x.size())) : s;
  } else {
    return false;
  }
  return true;
}

int64_t list_index(const List& l, const Value* i, bool for_insert) {
  const auto n = static_cast<int64_t>(l.size());
  int64_t k = i && i->is_int() ? i->as_int() : (for_insert ? n : n - 1);
  if (k < 0) k += n;
  if (for_insert) return std::clamp<int64_t>(k, 0, n);
  if (k < 0 || k >= n) throw Error("pop index out of range");
  return k;
}

bool list_method(const Value& self, const std::string& name, const Args& a, Value& out) {
  List& l = self.as_list();
  const auto need = [&](size_t n) {
    if (a.pos.size() < n) throw Error(name + "() needs " + std::to_string(n) + " argument(s)");
  };
  out = nullptr;
  if (name == "append") {
    need(1);
    check_size(l.size() + 1);
    l.push_back(a.pos[0]);
  } else if (name == "pop") {
    const int64_t k = list_index(l, a.get(0, "index"), false);
    out = l[static_cast<size_t>(k)];
    l.erase(l.begin() + k);
  } else if (name == "insert") {
    need(2);
    l.insert(l.begin() + list_index(l, &a.pos[0], true), a.pos[1]);
  } else if (name == "extend") {
    need(1);
    List more = iterate(a.pos[0]);
    check_size(l.size() + more.size());
    l.insert(l.end(), more.begin(), more.end());
  } else if (name == "index" || name == "count" || name == "remove") {
    need(1);
    int64_t n = 0, first = -1;
    for (size_t i = 0; i < l.size(); ++i)
      if (equal(l[i], a.pos[0])) {
        if (first < 0) first = static_cast<int64_t>(i);
        ++n;
      }
    if (name == "count") out = n;
    else if (first < 0) throw Error("list." + name + "(x): x not in list");
    else if (name == "index") out = first;
    else l.erase(l.begin() + first);
  } else if (name == "reverse") {
    std::reverse(l.begin(), l.end());
  } else if (name == "copy") {
    out = Value::list(l);
  } else if (name == "clear") {
    l.clear();
  } else {
    return false;
  }
  return true;
}

bool dict_method(const Value& self, const std::string& name, const Args& a, Value& out) {
  Dict& d = self.as_dict();
  const auto key = [&]() {
    if (a.pos.empty() || !a.pos[0].is_string()) throw Error("dict." + name + "() needs a string key");
    return a.pos[0].as_string();
  };
  if (name == "get" || name == "setdefault") {
    const std::string k = key();
    const Value* v = d.find(k);
    const Value dflt = a.pos.size() > 1 ? a.pos[1] : Value(nullptr);
    if (!v && name == "setdefault") d.set(k, dflt);
    out = v ? *v : dflt;
  } else if (name == "items" || name == "keys" || name == "values") {
    List l;
    for (const auto& e : d.items)
      l.push_back(name == "items" ? Value::list({e.key_value(), e.second}) : name == "keys" ? e.key_value() : e.second);
    out = Value::list(std::move(l));
  } else if (name == "pop") {
    const std::string k = key();
    const Value* v = d.find(k);
    if (!v && a.pos.size() < 2) throw Error("dict.pop(): no key '" + k + "'");
    out = v ? *v : a.pos[1];
    d.erase(k);
  } else if (name == "update") {
    if (!a.pos.empty()) {
      if (!a.pos[0].is_dict()) throw Error("dict.update() needs a dict");
      for (const auto& e : a.pos[0].as_dict().items) d.set(e.first, e.second, e.key);
    }
    for (const auto& [k, v] : a.kw) d.set(k, v);
    out = nullptr;
  } else if (name == "copy") {
    Value c = Value::dict();
    c.as_dict().items = d.items;
    out = c;
  } else if (name == "clear") {
    d.items.clear();
    out = nullptr;
  } else {
    return false;
  }
  return true;
}

}  // namespace

bool has_method(const Value& obj, const std::string& name) {
  if (obj.is_string()) return listed(kStringMethods, name);
  if (obj.is_list()) return listed(kListMethods, name);
  if (obj.is_dict()) return !obj.as_dict().is_namespace && listed(kDictMethods, name);
  return false;
}

bool call_method(const Value& obj, const std::string& name, const Args& args, Value& out) {
  if (!has_method(obj, name)) return false;
  if (obj.is_string()) return string_method(obj.as_string(), name, args, out);
  if (obj.is_list()) return list_method(obj, name, args, out);
  return dict_method(obj, name, args, out);
}

}  // namespace hart::jinja
