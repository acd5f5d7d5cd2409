#include "chat/jinja/value.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "chat/jinja/builtins.h"
#include "common/error.h"

namespace hart::jinja {

const Value* Args::get(size_t index, const std::string& name) const {
  for (const auto& [k, v] : kw)
    if (k == name) return &v;
  return index < pos.size() ? &pos[index] : nullptr;
}

namespace {

// Freeing a container frees its items; when an item is a container held only here, its items
// are moved onto a work list first, so each delete is shallow and the depth is never recursion.
void take_children(List& items, List& work);
void take_children(Dict& d, List& work) {
  for (auto& e : d.items) {
    work.push_back(std::move(e.second));
    work.push_back(std::move(e.key));
  }
  d.items.clear();
}
void take_children(List& items, List& work) {
  for (auto& v : items) work.push_back(std::move(v));
  items.clear();
}

void drain(List& work) {
  while (!work.empty()) {
    Value v = std::move(work.back());
    work.pop_back();
    // Only the last holder may empty a container; others keep it alive and intact.
    if (v.is_list() && v.list_use_count() == 1) take_children(v.as_list(), work);
    else if (v.is_dict() && v.dict_use_count() == 1) take_children(v.as_dict(), work);
  }
}

template <class Container>
struct ShallowDelete {
  void operator()(Container* c) const {
    List work;
    take_children(*c, work);
    delete c;
    drain(work);
  }
};

}  // namespace

Value Value::list(List items) { return Value(ListPtr(new List(std::move(items)), ShallowDelete<List>{})); }
Value Value::dict() { return Value(DictPtr(new Dict(), ShallowDelete<Dict>{})); }

Value Value::function(std::string name, std::function<Value(const Args&)> fn) {
  return Value(std::make_shared<const Function>(Function{std::move(name), std::move(fn)}));
}

int64_t Value::as_int() const { return is_bool() ? int64_t{as_bool()} : std::get<int64_t>(v_); }

double Value::as_double() const { return is_float() ? std::get<double>(v_) : static_cast<double>(as_int()); }

bool Value::truthy() const {
  if (is_undefined() || is_none()) return false;
  if (is_bool()) return as_bool();
  if (is_int()) return as_int() != 0;
  if (is_float()) return as_double() != 0.0;
  if (is_string()) return !as_string().empty();
  if (is_list()) return !as_list().empty();
  if (is_dict()) return !as_dict().items.empty();
  return true;
}

std::string Value::type_name() const {
  if (is_undefined()) return "undefined";
  if (is_none()) return "NoneType";
  if (is_bool()) return "bool";
  if (is_int()) return "int";
  if (is_float()) return "float";
  if (is_string()) return "str";
  if (is_list()) return "list";
  if (is_dict()) return as_dict().is_namespace ? "Namespace" : "dict";
  return "function";
}

const Value* Dict::find(const std::string& key) const {
  for (const auto& e : items)
    if (e.first == key) return &e.second;
  return nullptr;
}

void Dict::set(const std::string& key, Value v, Value original_key) {
  for (auto& e : items)
    if (e.first == key) {
      e.second = std::move(v);
      return;
    }
  items.emplace_back(key, std::move(v), std::move(original_key));
}

bool Dict::erase(const std::string& key) {
  for (auto it = items.begin(); it != items.end(); ++it)
    if (it->first == key) {
      items.erase(it);
      return true;
    }
  return false;
}

bool equal(const Value& a, const Value& b, int depth) {
  if (depth > kMaxNesting) throw Error("values nested too deeply to compare");
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.is_string() && b.is_string()) return a.as_string() == b.as_string();
  if (a.is_none() || b.is_none()) return a.is_none() && b.is_none();
  if (a.is_undefined() || b.is_undefined()) return a.is_undefined() && b.is_undefined();
  if (a.is_list() && b.is_list()) {
    const List &x = a.as_list(), &y = b.as_list();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!equal(x[i], y[i], depth + 1)) return false;
    return true;
  }
  if (a.is_dict() && b.is_dict()) {
    const Dict &x = a.as_dict(), &y = b.as_dict();
    if (x.items.size() != y.items.size()) return false;
    for (const auto& e : x.items) {
      const Value* w = y.find(e.first);
      if (!w || !equal(e.second, *w, depth + 1)) return false;
    }
    return true;
  }
  if (a.is_function() && b.is_function()) return &a.as_function() == &b.as_function();
  return false;
}

std::string float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  char buf[40];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  std::string s = buf;
  // Python writes 1e-05 and 1e+16 as %g does, but always shows a fraction for plain numbers.
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

namespace {

std::string quote(const std::string& s) {
  // Python picks single quotes unless the text holds one and no double quote.
  const char q = (s.find('\'') != std::string::npos && s.find('"') == std::string::npos) ? '"' : '\'';
  std::string out(1, q);
  for (char c : s) {
    if (c == q || c == '\\') out += '\\';
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else out += c;
  }
  return out + q;
}

}  // namespace

namespace {

std::string repr_at(const Value& v, int depth) {
  if (depth > kMaxNesting) throw Error("value nested too deeply to print");
  if (v.is_string()) return quote(v.as_string());
  if (v.is_list()) {
    std::string out = "[";
    const List& l = v.as_list();
    for (size_t i = 0; i < l.size(); ++i) {
      out += (i ? ", " : "") + repr_at(l[i], depth + 1);
      check_size(out.size());
    }
    return out + "]";
  }
  if (v.is_dict()) {
    std::string out = "{";
    bool first = true;
    for (const auto& e : v.as_dict().items) {
      out += (first ? "" : ", ") + repr_at(e.key_value(), depth + 1) + ": " + repr_at(e.second, depth + 1);
      check_size(out.size());
      first = false;
    }
    return out + "}";
  }
  return to_str(v);
}

}  // namespace

std::string repr(const Value& v) { return repr_at(v, 0); }

std::string to_str(const Value& v) {
  if (v.is_undefined()) return "";
  if (v.is_none()) return "None";
  if (v.is_bool()) return v.as_bool() ? "True" : "False";
  if (v.is_int()) return std::to_string(v.as_int());
  if (v.is_float()) return float_repr(v.as_double());
  if (v.is_string()) return v.as_string();
  if (v.is_function()) return "<function " + v.as_function().name + ">";
  return repr(v);
}

}  // namespace hart::jinja
