#include "chat/jinja/template.h"

#include "chat/jinja/builtins.h"
#include "chat/jinja/parser.h"
#include "common/error.h"

namespace hart::jinja {
namespace {

Value range(const Args& a) {
  for (const Value& v : a.pos)
    if (!v.is_int()) throw Error("range() needs integers");
  if (a.pos.empty() || a.pos.size() > 3) throw Error("range() takes 1 to 3 arguments");
  int64_t start = 0, stop, step = 1;
  if (a.pos.size() == 1) {
    stop = a.pos[0].as_int();
  } else {
    start = a.pos[0].as_int();
    stop = a.pos[1].as_int();
    if (a.pos.size() == 3) step = a.pos[2].as_int();
  }
  if (step == 0) throw Error("range() step must not be zero");
  List out;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    check_size(out.size() + 1);
    out.emplace_back(i);
  }
  return Value::list(std::move(out));
}

// namespace(a=1) or namespace({'a': 1}): the dict whose attributes `set ns.a = ...` assigns.
Value make_namespace(const Args& a) {
  Value ns = Value::dict();
  ns.as_dict().is_namespace = true;
  for (const Value& v : a.pos) {
    if (!v.is_dict()) throw Error("namespace() takes a dict or keyword arguments");
    for (const auto& e : v.as_dict().items) ns.as_dict().set(e.first, e.second, e.key);
  }
  for (const auto& [k, x] : a.kw) ns.as_dict().set(k, x);
  return ns;
}

Value make_dict(const Args& a) {
  Value d = make_namespace(a);
  d.as_dict().is_namespace = false;
  return d;
}

Value strftime(const std::tm& now, const Args& a) {
  if (a.pos.empty() || !a.pos[0].is_string()) throw Error("strftime_now() needs a format string");
  char buf[512];
  const size_t n = std::strftime(buf, sizeof buf, a.pos[0].as_string().c_str(), &now);
  if (n == 0 && !a.pos[0].as_string().empty()) throw Error("strftime_now(): format too long or empty result");
  return std::string(buf, n);
}

}  // namespace

Template::Template(std::string_view source) : body_(std::make_shared<const Body>(parse(source))) {}

std::string Template::render(const nlohmann::ordered_json& context, const std::tm& now) const {
  if (!context.is_object()) throw Error("template context must be a JSON object");
  auto globals = std::make_shared<Frame>();
  auto& g = globals->vars;
  g["range"] = Value::function("range", range);
  g["namespace"] = Value::function("namespace", make_namespace);
  g["dict"] = Value::function("dict", make_dict);
  g["raise_exception"] = Value::function("raise_exception", [](const Args& a) -> Value {
    throw RaisedError(a.pos.empty() ? "raise_exception() called" : to_str(a.pos[0]));
  });
  g["strftime_now"] = Value::function("strftime_now", [now](const Args& a) { return strftime(now, a); });
  for (const auto& [k, v] : context.items()) g[k] = from_json(v);
  return jinja::render(*body_, std::move(globals));
}

}  // namespace hart::jinja
