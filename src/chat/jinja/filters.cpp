// Jinja's filters (`x | name(args)`), with Jinja2's argument names and defaults.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "chat/jinja/builtins.h"
#include "common/error.h"

namespace hart::jinja {
namespace {

const Value kNone(nullptr);

// By value: callers pass temporaries as defaults.
Value arg_or(const Args& a, size_t i, const std::string& name, const Value& dflt) {
  const Value* v = a.get(i, name);
  return v ? *v : dflt;
}

bool flag(const Args& a, size_t i, const std::string& name, bool dflt) {
  const Value* v = a.get(i, name);
  return v ? v->truthy() : dflt;
}

// selectattr/map/sort's `attribute`: a dotted path of dict keys (or list indices).
Value attr_path(const Value& v, const std::string& path) {
  Value cur = v;
  size_t b = 0;
  for (;;) {
    const size_t e = path.find('.', b);
    const std::string part = path.substr(b, e == std::string::npos ? std::string::npos : e - b);
    if (cur.is_dict()) {
      const Value* x = cur.as_dict().find(part);
      cur = x ? *x : Value::undefined(part);
    } else if (cur.is_list() && !part.empty() && std::all_of(part.begin(), part.end(), ::isdigit)) {
      const size_t i = std::stoul(part);
      cur = i < cur.as_list().size() ? cur.as_list()[i] : Value::undefined(part);
    } else {
      return Value::undefined(part);
    }
    if (e == std::string::npos) return cur;
    b = e + 1;
  }
}

std::string attribute_arg(const Args& a, size_t i) {
  const Value* v = a.get(i, "attribute");
  if (!v) return "";
  if (!v->is_string()) throw Error("attribute must be a string");
  return v->as_string();
}

// select/reject/selectattr/rejectattr: a test name (default: truthiness) and its arguments,
// starting at positional argument `first`.
List filter_by_test(const Value& seq, const Args& a, size_t first, const std::string& attr, bool keep) {
  std::string test;
  Args targs;
  if (a.pos.size() > first) {
    if (!a.pos[first].is_string()) throw Error("test name must be a string");
    test = a.pos[first].as_string();
    targs.pos.assign(a.pos.begin() + static_cast<long>(first) + 1, a.pos.end());
  }
  List out;
  for (const Value& x : iterate(seq)) {
    const Value subject = attr.empty() ? x : attr_path(x, attr);
    const bool ok = test.empty() ? subject.truthy() : apply_test(test, subject, targs);
    if (ok == keep) out.push_back(x);
  }
  return out;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// sort/dictsort/unique/min/max compare strings case-insensitively unless told otherwise.
Value sort_key(const Value& v, bool case_sensitive) {
  return !case_sensitive && v.is_string() ? Value(lower(v.as_string())) : v;
}

std::string indent(const std::string& s, const Args& a) {
  const Value w = arg_or(a, 0, "width", Value(4));
  const std::string pad = w.is_string() ? w.as_string() : std::string(static_cast<size_t>(std::clamp<int64_t>(w.as_int(), 0, 1 << 16)), ' ');
  const bool first = flag(a, 1, "first", false), blank = flag(a, 2, "blank", false);
  // Jinja2 appends a newline and splits lines, so a trailing newline survives unindented.
  std::vector<std::string> lines;
  const std::string t = s + "\n";
  size_t b = 0;
  for (size_t p; (p = t.find('\n', b)) != std::string::npos; b = p + 1) lines.push_back(t.substr(b, p - b));
  std::string out = lines.empty() ? "" : lines[0];
  for (size_t i = 1; i < lines.size(); ++i) {
    out += '\n';
    if (blank || !lines[i].empty()) out += pad;
    out += lines[i];
    check_size(out.size());
  }
  return first ? pad + out : out;
}

Value tojson(const Value& v, const Args& a) {
  JsonStyle st;
  const Value ind = arg_or(a, 0, "indent", kNone);
  if (ind.is_int()) st.indent = static_cast<int>(std::clamp<int64_t>(ind.as_int(), 0, 64));
  else if (!ind.is_none()) throw Error("tojson: indent must be an integer");
  if (st.indent >= 0) st.item_sep = ",";  // json.dumps' default separators with an indent
  st.ensure_ascii = flag(a, 99, "ensure_ascii", false);
  st.sort_keys = flag(a, 99, "sort_keys", false);
  if (const Value* seps = a.get(99, "separators"); seps && !seps->is_none()) {
    if (!seps->is_list() || seps->as_list().size() != 2 || !seps->as_list()[0].is_string() || !seps->as_list()[1].is_string())
      throw Error("tojson: separators must be two strings");
    st.item_sep = seps->as_list()[0].as_string();
    st.key_sep = seps->as_list()[1].as_string();
  }
  return to_json(v, st);
}

Value to_int(const Value& v, const Args& a) {
  const Value dflt = arg_or(a, 0, "default", Value(0));
  if (v.is_int() || v.is_bool()) return v.as_int();
  if (v.is_float()) return std::isfinite(v.as_double()) ? Value(static_cast<int64_t>(v.as_double())) : dflt;
  if (v.is_string()) {
    const std::string& s = v.as_string();
    char* end = nullptr;
    errno = 0;
    const long long i = std::strtoll(s.c_str(), &end, 10);
    if (end != s.c_str() && *end == '\0' && errno == 0) return int64_t{i};
    const double d = std::strtod(s.c_str(), &end);
    if (end != s.c_str() && *end == '\0' && std::isfinite(d)) return static_cast<int64_t>(d);
  }
  return dflt;
}

Value to_float(const Value& v, const Args& a) {
  if (v.is_number()) return v.as_double();
  if (v.is_string()) {
    char* end = nullptr;
    const double d = std::strtod(v.as_string().c_str(), &end);
    if (end != v.as_string().c_str() && *end == '\0') return d;
  }
  return arg_or(a, 0, "default", Value(0.0));
}

// "%s" % x: the printf subset Python templates use.
std::string percent_format(const std::string& f, const Args& a) {
  std::string out;
  size_t next = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] != '%' || i + 1 >= f.size()) {
      out += f[i];
      continue;
    }
    const char c = f[++i];
    if (c == '%') {
      out += '%';
      continue;
    }
    if (next >= a.pos.size()) throw Error("format: not enough arguments");
    const Value& v = a.pos[next++];
    if (c == 'd' || c == 'i') out += std::to_string(v.is_number() ? static_cast<int64_t>(v.as_double()) : 0);
    else if (c == 'r') out += repr(v);
    else out += to_str(v);
  }
  return out;
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

Value sorted(const Value& v, const Args& a) {
  const bool reverse = flag(a, 0, "reverse", false), cs = flag(a, 1, "case_sensitive", false);
  const std::string attr = attribute_arg(a, 2);
  List l = iterate(v);
  std::stable_sort(l.begin(), l.end(), [&](const Value& x, const Value& y) {
    const Value kx = sort_key(attr.empty() ? x : attr_path(x, attr), cs);
    const Value ky = sort_key(attr.empty() ? y : attr_path(y, attr), cs);
    return reverse ? compare(ky, kx) < 0 : compare(kx, ky) < 0;
  });
  return Value::list(std::move(l));
}

Value dictsort(const Value& v, const Args& a) {
  if (!v.is_dict()) throw Error("dictsort needs a dict");
  const bool cs = flag(a, 0, "case_sensitive", false);
  const Value by = arg_or(a, 1, "by", Value("key"));
  const bool by_value = by.is_string() && by.as_string() == "value";
  const bool reverse = flag(a, 2, "reverse", false);
  List l;
  for (const auto& e : v.as_dict().items) l.push_back(Value::list({e.key_value(), e.second}));
  std::stable_sort(l.begin(), l.end(), [&](const Value& x, const Value& y) {
    const Value kx = sort_key(x.as_list()[by_value ? 1 : 0], cs), ky = sort_key(y.as_list()[by_value ? 1 : 0], cs);
    return reverse ? compare(ky, kx) < 0 : compare(kx, ky) < 0;
  });
  return Value::list(std::move(l));
}

Value extreme(const Value& v, const Args& a, bool want_max) {
  const bool cs = flag(a, 0, "case_sensitive", false);
  const std::string attr = attribute_arg(a, 1);
  const List l = iterate(v);
  if (l.empty()) return Value::undefined(want_max ? "max" : "min");
  size_t best = 0;
  for (size_t i = 1; i < l.size(); ++i) {
    const int c = compare(sort_key(attr.empty() ? l[i] : attr_path(l[i], attr), cs),
                          sort_key(attr.empty() ? l[best] : attr_path(l[best], attr), cs));
    if (want_max ? c > 0 : c < 0) best = i;
  }
  return l[best];
}

Value map(const Value& v, const Args& a) {
  List out;
  const std::string attr = attribute_arg(a, 99);
  if (!attr.empty()) {
    const Value dflt = arg_or(a, 99, "default", Value());
    for (const Value& x : iterate(v)) {
      Value y = attr_path(x, attr);
      out.push_back(y.is_undefined() ? dflt : y);
    }
    return Value::list(std::move(out));
  }
  if (a.pos.empty() || !a.pos[0].is_string()) throw Error("map needs a filter name or attribute=");
  Args fargs;
  fargs.pos.assign(a.pos.begin() + 1, a.pos.end());
  fargs.kw = a.kw;
  for (const Value& x : iterate(v)) out.push_back(apply_filter(a.pos[0].as_string(), x, fargs));
  return Value::list(std::move(out));
}

}  // namespace

Value apply_filter(const std::string& name, const Value& v, const Args& a) {
  if (name == "default" || name == "d") {
    const bool boolean = flag(a, 1, "boolean", false);
    // llama.cpp counts none as missing too (Jinja2 would keep it).
    const bool use = boolean ? !v.truthy() : v.is_undefined() || v.is_none();
    return use ? arg_or(a, 0, "default_value", Value("")) : v;
  }
  if (name == "tojson") return tojson(v, a);
  if (name == "safe") return v.is_undefined() ? Value("") : v;  // llama.cpp: undefined | safe is ""
  if (name == "string") return to_str(v);
  if (name == "length" || name == "count") return length(v);
  if (name == "list") return Value::list(iterate(v));
  if (name == "int") return to_int(v, a);
  if (name == "float") return to_float(v, a);
  if (name == "items") {
    if (v.is_undefined() || v.is_none()) return Value::list();  // llama.cpp is as lenient with none
    if (!v.is_dict()) throw Error("items needs a dict, not " + v.type_name());
    List l;
    for (const auto& e : v.as_dict().items) l.push_back(Value::list({e.key_value(), e.second}));
    return Value::list(std::move(l));
  }
  if (name == "first" || name == "last") {
    const List l = iterate(v);
    if (l.empty()) return Value::undefined(name);
    return name == "first" ? l.front() : l.back();
  }
  if (name == "join") {
    const Value sep = arg_or(a, 0, "d", Value(""));
    const std::string attr = attribute_arg(a, 1);
    std::string out;
    bool first = true;
    for (const Value& x : iterate(v)) {
      if (!first) out += to_str(sep);
      out += to_str(attr.empty() ? x : attr_path(x, attr));
      first = false;
      check_size(out.size());
    }
    return out;
  }
  if (name == "selectattr" || name == "rejectattr") {
    if (a.pos.empty() || !a.pos[0].is_string()) throw Error(name + " needs an attribute name");
    return Value::list(filter_by_test(v, a, 1, a.pos[0].as_string(), name == "selectattr"));
  }
  if (name == "select" || name == "reject") return Value::list(filter_by_test(v, a, 0, "", name == "select"));
  if (name == "map") return map(v, a);
  if (name == "unique") {
    const bool cs = flag(a, 0, "case_sensitive", false);
    const std::string attr = attribute_arg(a, 1);
    List out, seen;
    for (const Value& x : iterate(v)) {
      const Value k = sort_key(attr.empty() ? x : attr_path(x, attr), cs);
      if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return equal(s, k); })) {
        seen.push_back(k);
        out.push_back(x);
      }
    }
    return Value::list(std::move(out));
  }
  if (name == "sort") return sorted(v, a);
  if (name == "dictsort") return dictsort(v, a);
  if (name == "reverse") {
    if (v.is_string()) {
      auto cps = code_points(v.as_string());
      std::string out;
      for (auto it = cps.rbegin(); it != cps.rend(); ++it) out += *it;
      return out;
    }
    List l = iterate(v);
    std::reverse(l.begin(), l.end());
    return Value::list(std::move(l));
  }
  if (name == "min" || name == "max") return extreme(v, a, name == "max");
  if (name == "sum") {
    const std::string attr = attribute_arg(a, 0);
    Value total = arg_or(a, 1, "start", Value(0));
    for (const Value& x : iterate(v)) {
      const Value y = attr.empty() ? x : attr_path(x, attr);
      if (!y.is_number() || !total.is_number()) throw Error("sum needs numbers");
      total = total.is_float() || y.is_float() ? Value(total.as_double() + y.as_double()) : Value(total.as_int() + y.as_int());
    }
    return total;
  }
  if (name == "abs") {
    if (v.is_float()) return std::fabs(v.as_double());
    if (v.is_number()) return v.as_int() < 0 ? -v.as_int() : v.as_int();
    throw Error("abs needs a number");
  }
  if (name == "round") {
    if (!v.is_number()) throw Error("round needs a number");
    const Value p = arg_or(a, 0, "precision", Value(0));
    const double scale = std::pow(10.0, static_cast<double>(std::clamp<int64_t>(p.is_int() ? p.as_int() : 0, -20, 20)));
    const Value method = arg_or(a, 1, "method", Value("common"));
    const std::string m = method.is_string() ? method.as_string() : "common";
    const double x = v.as_double() * scale;
    return (m == "floor" ? std::floor(x) : m == "ceil" ? std::ceil(x) : std::round(x)) / scale;
  }
  if (name == "attr") {
    if (a.pos.empty() || !a.pos[0].is_string()) throw Error("attr needs a name");
    return attr_path(v, a.pos[0].as_string());
  }
  if (name == "from_json") {
    if (!v.is_string()) throw Error("from_json needs a string");
    try {
      return from_json(nlohmann::ordered_json::parse(v.as_string()));
    } catch (const nlohmann::json::exception& e) {
      throw Error(std::string("from_json: ") + e.what());
    }
  }
  // The rest work on text.
  const std::string s = to_str(v);
  if (name == "trim" || name == "strip") {
    Value out;
    call_method(Value(s), "strip", a, out);
    return out;
  }
  if (name == "upper" || name == "lower" || name == "capitalize" || name == "title") {
    Value out;
    call_method(Value(s), name, Args{}, out);
    return out;
  }
  if (name == "replace") {
    Value out;
    call_method(Value(s), "replace", a, out);
    return out;
  }
  if (name == "indent") return indent(s, a);
  if (name == "format") return percent_format(s, a);
  if (name == "escape" || name == "e" || name == "forceescape") return html_escape(s);
  if (name == "wordcount") {
    Value words;
    call_method(Value(s), "split", Args{}, words);
    return length(words);
  }
  throw Error("unknown filter '" + name + "'");
}

}  // namespace hart::jinja
