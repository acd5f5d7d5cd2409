// The values a Jinja template computes with: Python's None, bool, int, float, str, list and dict
// (insertion-ordered, as Python's is, so tojson keeps a message's key order), plus Jinja's
// Undefined and callables (macros, bound methods, globals such as range()).
// Lists and dicts are shared: `{% set x = y %}` aliases, and `x.append(1)` or `ns.a = 1` is seen
// through every alias, as in Python. Strings are values.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace hart::jinja {

class Value;
using List = std::vector<Value>;

// Positional and keyword arguments of one call.
struct Args {
  std::vector<Value> pos;
  std::vector<std::pair<std::string, Value>> kw;
  // The argument named `name`, else positional `index`, else nullptr.
  const Value* get(size_t index, const std::string& name) const;
};

struct Dict;
struct Function {
  std::string name;
  std::function<Value(const Args&)> call;
};

struct Undefined {
  std::string name;  // what was looked up, for error messages
};

class Value {
 public:
  using ListPtr = std::shared_ptr<List>;
  using DictPtr = std::shared_ptr<Dict>;
  using FuncPtr = std::shared_ptr<const Function>;

  Value() = default;  // Undefined
  Value(std::nullptr_t) : v_(nullptr) {}
  Value(bool b) : v_(b) {}
  Value(int i) : v_(int64_t{i}) {}
  Value(int64_t i) : v_(i) {}
  Value(size_t i) : v_(static_cast<int64_t>(i)) {}
  Value(double d) : v_(d) {}
  Value(std::string s) : v_(std::move(s)) {}
  Value(const char* s) : v_(std::string(s)) {}
  Value(ListPtr l) : v_(std::move(l)) {}
  Value(DictPtr d) : v_(std::move(d)) {}
  Value(FuncPtr f) : v_(std::move(f)) {}
  static Value undefined(std::string name) {
    Value v;
    v.v_ = Undefined{std::move(name)};
    return v;
  }
  // Containers are freed without recursion (see value.cpp), so a list nested a million deep
  // cannot overflow the stack when it goes.
  static Value list(List items = {});
  static Value dict();
  static Value function(std::string name, std::function<Value(const Args&)> fn);

  bool is_undefined() const { return std::holds_alternative<Undefined>(v_); }
  bool is_none() const { return std::holds_alternative<std::nullptr_t>(v_); }
  bool is_bool() const { return std::holds_alternative<bool>(v_); }
  bool is_int() const { return std::holds_alternative<int64_t>(v_); }
  bool is_float() const { return std::holds_alternative<double>(v_); }
  bool is_number() const { return is_int() || is_float() || is_bool(); }
  bool is_string() const { return std::holds_alternative<std::string>(v_); }
  bool is_list() const { return std::holds_alternative<ListPtr>(v_); }
  bool is_dict() const { return std::holds_alternative<DictPtr>(v_); }
  bool is_function() const { return std::holds_alternative<FuncPtr>(v_); }

  bool as_bool() const { return std::get<bool>(v_); }
  int64_t as_int() const;    // bool and int (Python's bool is an int)
  double as_double() const;  // any number
  const std::string& as_string() const { return std::get<std::string>(v_); }
  List& as_list() const { return *std::get<ListPtr>(v_); }
  Dict& as_dict() const { return *std::get<DictPtr>(v_); }
  const Function& as_function() const { return *std::get<FuncPtr>(v_); }
  const std::string& undefined_name() const { return std::get<Undefined>(v_).name; }
  long list_use_count() const { return std::get<ListPtr>(v_).use_count(); }
  long dict_use_count() const { return std::get<DictPtr>(v_).use_count(); }

  bool truthy() const;
  // Python's type name: "NoneType", "str", "list", ... (for error messages)
  std::string type_name() const;

 private:
  std::variant<Undefined, std::nullptr_t, bool, int64_t, double, std::string, ListPtr, DictPtr, FuncPtr>
      v_;
};

// An insertion-ordered dict keyed by text (an int key is kept beside its text, so dictsort and
// items() give it back as an int). Lookups are linear: template dicts (messages, tool
// schemas, namespaces) hold a handful of keys.
struct DictEntry {
  DictEntry(std::string k, Value v, Value original = Value()) : first(std::move(k)), second(std::move(v)), key(std::move(original)) {}
  std::string first;  // the key as text: lookups go by it
  Value second;
  Value key;  // a non-string key as written ({4096: ...}), else Undefined
  Value key_value() const { return key.is_undefined() ? Value(first) : key; }
};

struct Dict {
  std::vector<DictEntry> items;
  bool is_namespace = false;  // namespace(): the only dict whose attributes `set` may assign

  const Value* find(const std::string& key) const;
  void set(const std::string& key, Value v, Value original_key = Value());
  bool erase(const std::string& key);
};

// Nesting deeper than this is an error where values are walked (==, printing, tojson).
inline constexpr int kMaxNesting = 100;

// Python's == (1 == 1.0 == True; lists and dicts compare element-wise).
bool equal(const Value& a, const Value& b, int depth = 0);

// str(v) as Jinja prints it: "" for Undefined, "None", "True", Python reprs for lists and dicts.
std::string to_str(const Value& v);
// repr(v): strings in quotes (inside lists and dicts, and for error messages).
std::string repr(const Value& v);
// Python's repr of a float: the shortest digits that read back exactly, "1.0" for integers.
std::string float_repr(double d);

}  // namespace hart::jinja
