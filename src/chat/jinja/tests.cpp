// Jinja's tests: `x is name` / `x is name(arg)`.
#include <cmath>

#include "chat/jinja/builtins.h"
#include "common/error.h"

namespace hart::jinja {

bool apply_test(const std::string& name, const Value& v, const Args& args) {
  const auto arg = [&]() -> const Value& {
    if (args.pos.empty()) throw Error("test '" + name + "' needs an argument");
    return args.pos[0];
  };
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "string") return v.is_string();
  if (name == "number") return v.is_int() || v.is_float();
  if (name == "integer") return v.is_int();
  if (name == "float") return v.is_float();
  if (name == "boolean") return v.is_bool();
  if (name == "true") return v.is_bool() && v.as_bool();
  if (name == "false") return v.is_bool() && !v.as_bool();
  if (name == "mapping") return v.is_dict();
  // An undefined value is an empty sequence to llama.cpp (a loop over it runs no times).
  if (name == "sequence" || name == "iterable") return v.is_list() || v.is_string() || v.is_dict() || v.is_undefined();
  if (name == "callable") return v.is_function();
  if (name == "odd" || name == "even") {
    if (!v.is_int()) throw Error("test '" + name + "' needs an integer");
    return (v.as_int() % 2 != 0) == (name == "odd");
  }
  if (name == "divisibleby") {
    if (!v.is_int() || !arg().is_int() || arg().as_int() == 0) throw Error("divisibleby needs non-zero integers");
    return v.as_int() % arg().as_int() == 0;
  }
  if (name == "eq" || name == "equalto" || name == "==") return equal(v, arg());
  if (name == "ne" || name == "!=") return !equal(v, arg());
  if (name == "lt" || name == "lessthan" || name == "<") return compare(v, arg()) < 0;
  if (name == "le" || name == "<=") return compare(v, arg()) <= 0;
  if (name == "gt" || name == "greaterthan" || name == ">") return compare(v, arg()) > 0;
  if (name == "ge" || name == ">=") return compare(v, arg()) >= 0;
  if (name == "sameas") {
    const Value& o = arg();
    if (v.is_list() && o.is_list()) return &v.as_list() == &o.as_list();
    if (v.is_dict() && o.is_dict()) return &v.as_dict() == &o.as_dict();
    return v.type_name() == o.type_name() && equal(v, o);
  }
  if (name == "in") {
    const Value& c = arg();
    if (c.is_string()) return v.is_string() && c.as_string().find(v.as_string()) != std::string::npos;
    if (c.is_dict()) return v.is_string() && c.as_dict().find(v.as_string());
    for (const Value& x : iterate(c))
      if (equal(x, v)) return true;
    return false;
  }
  if (name == "lower" || name == "upper") {
    if (!v.is_string()) return false;
    bool cased = false;
    for (char c : v.as_string()) {
      if (std::isalpha(static_cast<unsigned char>(c))) cased = true;
      if (name == "lower" ? std::isupper(static_cast<unsigned char>(c)) : std::islower(static_cast<unsigned char>(c)))
        return false;
    }
    return cased;
  }
  throw Error("unknown test '" + name + "'");
}

}  // namespace hart::jinja
