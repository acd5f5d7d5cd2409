#include "chat/jinja/eval.h"

#include <cmath>

#include "chat/jinja/builtins.h"

namespace hart::jinja {
namespace {

// An error that already names its line; inner statements' errors pass through outer ones.
class LocatedError : public Error {
 public:
  using Error::Error;
};

enum class Flow { Normal, Break, Continue };

class Interpreter {
 public:
  explicit Interpreter(std::shared_ptr<Frame> globals) : frame_(std::move(globals)) {}

  void run(const Body& body, std::string& out) { exec_body(body, out); }

 private:
  // Swaps in a frame for the life of the guard.
  struct Scope {
    Scope(Interpreter& in, std::shared_ptr<Frame> f) : in(in), saved(std::move(in.frame_)) { in.frame_ = std::move(f); }
    ~Scope() { in.frame_ = std::move(saved); }
    Interpreter& in;
    std::shared_ptr<Frame> saved;
  };

  std::shared_ptr<Frame> child() {
    auto f = std::make_shared<Frame>();
    f->parent = frame_;
    return f;
  }

  void step() {
    if (++steps_ > kMaxSteps) throw Error("template runs too long (over " + std::to_string(kMaxSteps) + " steps)");
  }

  Value lookup(const std::string& name) const {
    for (const Frame* f = frame_.get(); f; f = f->parent.get())
      if (auto it = f->vars.find(name); it != f->vars.end()) return it->second;
    return Value::undefined(name);
  }

  Flow exec_body(const Body& body, std::string& out) {
    for (const auto& s : body) {
      const Flow flow = exec(*s, out);
      if (flow != Flow::Normal) return flow;
    }
    return Flow::Normal;
  }

  Flow exec(const Stmt& s, std::string& out) {
    try {
      return exec_unlocated(s, out);
    } catch (const RaisedError&) {
      throw;
    } catch (const LocatedError&) {
      throw;
    } catch (const std::exception& e) {
      throw LocatedError("template line " + std::to_string(s.line) + ": " + e.what());
    }
  }

  Flow exec_unlocated(const Stmt& s, std::string& out) {
    switch (s.kind) {
      case Stmt::Text:
        write(out, s.text);
        return Flow::Normal;
      case Stmt::Output:
        write(out, to_str(eval(*s.expr)));
        return Flow::Normal;
      case Stmt::If:
        for (size_t i = 0; i < s.conds.size(); ++i)
          if (eval(*s.conds[i]).truthy()) return exec_body(s.bodies[i], out);
        return s.bodies.size() > s.conds.size() ? exec_body(s.bodies.back(), out) : Flow::Normal;
      case Stmt::For:
        return exec_for(s, out);
      case Stmt::Set:
        exec_set(s);
        return Flow::Normal;
      case Stmt::Macro:
        frame_->vars[s.text] = make_macro(s);
        return Flow::Normal;
      case Stmt::Break:
        return Flow::Break;
      case Stmt::Continue:
        return Flow::Continue;
      case Stmt::FilterBlock: {
        std::string text;
        exec_body(s.bodies[0], text);
        // The filter chain was parsed onto a placeholder operand named "" (no template can
        // name it); bind it to the block's text.
        Scope scope(*this, child());
        frame_->vars[""] = Value(std::move(text));
        write(out, to_str(eval(*s.expr)));
        return Flow::Normal;
      }
      case Stmt::CallBlock: {
        Value caller = make_caller(s);
        write(out, to_str(eval_call(*s.expr, &caller)));
        return Flow::Normal;
      }
    }
    return Flow::Normal;
  }

  static void write(std::string& out, const std::string& text) {
    check_size(out.size() + text.size());
    out += text;
  }

  void bind(const std::vector<std::string>& names, const Value& v) {
    if (names.size() == 1) {
      frame_->vars[names[0]] = v;
      return;
    }
    const List items = iterate(v);
    if (items.size() != names.size())
      throw Error("cannot unpack " + std::to_string(items.size()) + " values into " + std::to_string(names.size()) + " names");
    for (size_t i = 0; i < names.size(); ++i) frame_->vars[names[i]] = items[i];
  }

  Flow exec_for(const Stmt& s, std::string& out) {
    List items = iterate(eval(*s.expr));
    if (!s.conds.empty()) {
      // `for x in xs if cond`: the filter runs first, so loop.index counts the kept items.
      List kept;
      for (Value& x : items) {
        step();
        Scope scope(*this, child());
        bind(s.targets, x);
        if (eval(*s.conds[0]).truthy()) kept.push_back(std::move(x));
      }
      items = std::move(kept);
    }
    if (items.empty()) return s.bodies.size() > 1 ? exec_body(s.bodies[1], out) : Flow::Normal;
    const size_t n = items.size();
    for (size_t i = 0; i < n; ++i) {
      step();
      Scope scope(*this, child());
      bind(s.targets, items[i]);
      frame_->vars["loop"] = loop_object(items, i);
      if (exec_body(s.bodies[0], out) == Flow::Break) break;
    }
    return Flow::Normal;
  }

  static Value loop_object(const List& items, size_t i) {
    const size_t n = items.size();
    Value loop = Value::dict();
    Dict& d = loop.as_dict();
    d.set("index", i + 1);
    d.set("index0", i);
    d.set("revindex", n - i);
    d.set("revindex0", n - i - 1);
    d.set("first", i == 0);
    d.set("last", i + 1 == n);
    d.set("length", n);
    d.set("previtem", i > 0 ? items[i - 1] : Value::undefined("previtem"));
    d.set("nextitem", i + 1 < n ? items[i + 1] : Value::undefined("nextitem"));
    d.set("cycle", Value::function("cycle", [i](const Args& a) {
            if (a.pos.empty()) throw Error("loop.cycle() needs arguments");
            return a.pos[i % a.pos.size()];
          }));
    return loop;
  }

  void exec_set(const Stmt& s) {
    Value v;
    if (s.expr) {
      v = eval(*s.expr);
    } else {
      std::string text;
      exec_body(s.bodies[0], text);
      v = std::move(text);
    }
    if (s.attr.empty()) return bind(s.targets, v);
    const Value target = lookup(s.targets[0]);
    if (!target.is_dict()) throw Error("cannot set attribute '" + s.attr + "' of " + target.type_name() + " '" + s.targets[0] + "'");
    target.as_dict().set(s.attr, std::move(v));
  }

  // A macro closes over the frame it was defined in (weakly: that frame holds the macro).
  Value make_macro(const Stmt& s) {
    std::weak_ptr<Frame> defined_in = frame_;
    const Stmt* def = &s;
    return Value::function(s.text, [this, def, defined_in](const Args& a) -> Value {
      auto parent = defined_in.lock();
      if (!parent) throw Error("macro '" + def->text + "' called outside its scope");
      return call_body(*def, parent, a);
    });
  }

  // {% call(params) m(args) %}body{% endcall %}: m sees `caller`, which renders the body.
  Value make_caller(const Stmt& s) {
    std::shared_ptr<Frame> here = frame_;
    const Stmt* def = &s;
    return Value::function("caller", [this, def, here](const Args& a) -> Value { return call_body(*def, here, a); });
  }

  Value call_body(const Stmt& def, const std::shared_ptr<Frame>& parent, const Args& a) {
    step();
    if (depth_ >= kMaxCallDepth) throw Error("macro calls nested too deeply (over " + std::to_string(kMaxCallDepth) + ")");
    auto f = std::make_shared<Frame>();
    f->parent = parent;
    Scope scope(*this, f);
    ++depth_;
    struct Leave {
      int& d;
      ~Leave() { --d; }
    } leave{depth_};
    for (size_t i = 0; i < def.targets.size(); ++i) {
      if (const Value* v = a.get(i, def.targets[i])) f->vars[def.targets[i]] = *v;
      else if (def.conds[i]) f->vars[def.targets[i]] = eval(*def.conds[i]);
      else f->vars[def.targets[i]] = Value::undefined(def.targets[i]);
    }
    for (const auto& [k, v] : a.kw)
      if (k == "caller") f->vars[k] = v;
    std::string text;
    exec_body(def.bodies[0], text);
    return text;
  }

  Args eval_args(const Expr& e, size_t first) {
    Args a;
    for (size_t i = first; i < e.args.size(); ++i) a.pos.push_back(eval(*e.args[i]));
    for (const auto& [k, x] : e.kwargs) a.kw.emplace_back(k, eval(*x));
    return a;
  }

  Value get_attr(const Value& obj, const std::string& name) {
    if (obj.is_dict())
      if (const Value* v = obj.as_dict().find(name)) return *v;
    if (has_method(obj, name))
      return Value::function(name, [obj, name](const Args& a) {
        Value out;
        call_method(obj, name, a, out);
        return out;
      });
    return Value::undefined(name);
  }

  static int64_t norm_index(int64_t i, size_t n) { return i < 0 ? i + static_cast<int64_t>(n) : i; }

  Value get_item(const Value& obj, const Value& key) {
    if (obj.is_dict()) {
      if (!key.is_string()) {
        const Value* v = obj.as_dict().find(to_str(key));
        return v ? *v : Value::undefined(to_str(key));
      }
      const Value* v = obj.as_dict().find(key.as_string());
      return v ? *v : Value::undefined(key.as_string());
    }
    if ((obj.is_list() || obj.is_string()) && key.is_int()) {
      if (obj.is_list()) {
        const List& l = obj.as_list();
        const int64_t i = norm_index(key.as_int(), l.size());
        return i >= 0 && i < static_cast<int64_t>(l.size()) ? l[static_cast<size_t>(i)] : Value::undefined("item");
      }
      const auto cps = code_points(obj.as_string());
      const int64_t i = norm_index(key.as_int(), cps.size());
      return i >= 0 && i < static_cast<int64_t>(cps.size()) ? Value(cps[static_cast<size_t>(i)]) : Value::undefined("item");
    }
    if (key.is_string()) return get_attr(obj, key.as_string());
    if (obj.is_undefined() || obj.is_none()) return Value::undefined("item");
    throw Error("cannot index " + obj.type_name() + " with " + key.type_name());
  }

  Value slice(const Value& obj, const Expr& e) {
    int64_t bound[3];
    bool given[3];
    for (int k = 0; k < 3; ++k) {
      const Expr* x = e.args[static_cast<size_t>(k) + 1].get();
      Value v = x ? eval(*x) : Value(nullptr);
      given[k] = !v.is_none();
      if (given[k] && !v.is_int()) throw Error("slice indices must be integers");
      bound[k] = given[k] ? v.as_int() : 0;
    }
    const int64_t step = given[2] ? bound[2] : 1;
    if (step == 0) throw Error("slice step cannot be zero");
    std::vector<std::string> cps;
    const bool is_str = obj.is_string();
    if (is_str) cps = code_points(obj.as_string());
    else if (!obj.is_list()) throw Error("cannot slice " + obj.type_name());
    const auto n = static_cast<int64_t>(is_str ? cps.size() : obj.as_list().size());
    // Python's slice.indices(): clamp each bound into the range the step walks.
    const auto fix = [&](int k, int64_t dflt) {
      if (!given[k]) return dflt;
      int64_t i = bound[k] < 0 ? bound[k] + n : bound[k];
      if (step > 0) return std::clamp<int64_t>(i, 0, n);
      return std::clamp<int64_t>(i, -1, n - 1);
    };
    const int64_t start = fix(0, step > 0 ? 0 : n - 1), stop = fix(1, step > 0 ? n : -1);
    List items;
    std::string text;
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
      if (is_str) text += cps[static_cast<size_t>(i)];
      else items.push_back(obj.as_list()[static_cast<size_t>(i)]);
    }
    return is_str ? Value(std::move(text)) : Value::list(std::move(items));
  }

  // A call; `caller` is passed as a keyword argument from a call block.
  Value eval_call(const Expr& e, const Value* caller) {
    step();
    Args a = eval_args(e, 1);
    if (caller) a.kw.emplace_back("caller", *caller);
    const Expr& callee = *e.args[0];
    Value fn;
    if (callee.kind == Expr::Attr) {
      // obj.method(...) calls the method directly, without binding it first.
      const Value obj = eval(*callee.args[0]);
      const Value* key = obj.is_dict() ? obj.as_dict().find(callee.name) : nullptr;
      if (!key) {
        Value out;
        if (call_method(obj, callee.name, a, out)) return out;
        throw Error(obj.type_name() + " has no method '" + callee.name + "'");
      }
      fn = *key;
    } else {
      fn = eval(callee);
    }
    if (!fn.is_function()) {
      if (fn.is_undefined()) throw Error("'" + fn.undefined_name() + "' is undefined");
      throw Error("'" + fn.type_name() + "' object is not callable");
    }
    return fn.as_function().call(a);
  }

  Value eval(const Expr& e) {
    switch (e.kind) {
      case Expr::Literal:
        return e.value;
      case Expr::Name:
        return lookup(e.name);
      case Expr::ListLit: {
        List l;
        for (const auto& x : e.args) l.push_back(eval(*x));
        return Value::list(std::move(l));
      }
      case Expr::DictLit: {
        Value d = Value::dict();
        for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
          const Value k = eval(*e.args[i]);
          if (!k.is_string() && !k.is_number() && !k.is_none()) throw Error("unhashable dict key of type " + k.type_name());
          d.as_dict().set(k.is_string() ? k.as_string() : to_str(k), eval(*e.args[i + 1]), k.is_string() ? Value() : k);
        }
        return d;
      }
      case Expr::Attr:
        return get_attr(eval(*e.args[0]), e.name);
      case Expr::Index:
        return get_item(eval(*e.args[0]), eval(*e.args[1]));
      case Expr::Slice:
        return slice(eval(*e.args[0]), e);
      case Expr::Call:
        return eval_call(e, nullptr);
      case Expr::Filter: {
        step();
        const Value v = eval(*e.args[0]);
        return apply_filter(e.name, v, eval_args(e, 1));
      }
      case Expr::Test: {
        const Value v = eval(*e.args[0]);
        return apply_test(e.name, v, eval_args(e, 1)) != e.negated;
      }
      case Expr::Unary: {
        const Value v = eval(*e.args[0]);
        if (e.name == "not") return !v.truthy();
        if (!v.is_number()) throw Error("bad operand type for unary " + e.name + ": '" + v.type_name() + "'");
        if (e.name == "+") return v.is_bool() ? Value(v.as_int()) : v;
        return v.is_float() ? Value(-v.as_double()) : Value(-v.as_int());
      }
      case Expr::Binary:
        return eval_binary(e);
      case Expr::Cond:
        if (eval(*e.args[0]).truthy()) return eval(*e.args[1]);
        return e.args[2] ? eval(*e.args[2]) : Value::undefined("else");
    }
    return Value();
  }

  Value eval_binary(const Expr& e) {
    const std::string& op = e.name;
    const Value a = eval(*e.args[0]);
    if (op == "and") return a.truthy() ? eval(*e.args[1]) : a;
    if (op == "or") return a.truthy() ? a : eval(*e.args[1]);
    const Value b = eval(*e.args[1]);
    if (op == "==") return equal(a, b);
    if (op == "!=") return !equal(a, b);
    if (op == "<") return compare(a, b) < 0;
    if (op == "<=") return compare(a, b) <= 0;
    if (op == ">") return compare(a, b) > 0;
    if (op == ">=") return compare(a, b) >= 0;
    if (op == "in" || op == "not in") {
      Args args;
      args.pos.push_back(b);
      const bool found = !b.is_undefined() && !b.is_none() && apply_test("in", a, args);
      return found == (op == "in");
    }
    if (op == "~") {
      // llama.cpp joins a string with none as with "" (Jinja2 would write "None").
      std::string s = (a.is_none() && b.is_string() ? "" : to_str(a)) + (b.is_none() && a.is_string() ? "" : to_str(b));
      check_size(s.size());
      return s;
    }
    if (op == "%" && a.is_string()) {
      // "%s and %s" % (x, y): Python's printf-style formatting, the format filter's.
      Args args;
      if (b.is_list()) args.pos = b.as_list();
      else args.pos.push_back(b);
      return apply_filter("format", a, args);
    }
    return arithmetic(op, a, b);
  }

  static Value arithmetic(const std::string& op, const Value& a, const Value& b) {
    if (op == "+") {
      if (a.is_string() && b.is_string()) {
        check_size(a.as_string().size() + b.as_string().size());
        return a.as_string() + b.as_string();
      }
      // As llama.cpp's renderer: a string plus an undefined value or none is the string, so
      // `"..." + functions` renders when the caller passes no `functions` (Jinja2 would fail).
      const auto absent = [](const Value& v) { return v.is_undefined() || v.is_none(); };
      if ((a.is_string() && absent(b)) || (absent(a) && b.is_string())) return a.is_string() ? a : b;
      if (a.is_list() && b.is_list()) {
        List l = a.as_list();
        check_size(l.size() + b.as_list().size());
        l.insert(l.end(), b.as_list().begin(), b.as_list().end());
        return Value::list(std::move(l));
      }
    }
    if (op == "*" && (a.is_string() || a.is_list() || b.is_string() || b.is_list())) {
      const Value& seq = a.is_int() ? b : a;
      const Value& times = a.is_int() ? a : b;
      if (!times.is_int() || !(seq.is_string() || seq.is_list()))
        throw Error("can't multiply " + a.type_name() + " by " + b.type_name());
      const int64_t n = std::max<int64_t>(times.as_int(), 0);
      const size_t unit = seq.is_string() ? seq.as_string().size() : seq.as_list().size();
      if (unit && static_cast<uint64_t>(n) > kMaxString / unit) check_size(kMaxString + 1);
      if (seq.is_string()) {
        std::string s;
        for (int64_t i = 0; i < n; ++i) s += seq.as_string();
        return s;
      }
      List l;
      for (int64_t i = 0; i < n; ++i) l.insert(l.end(), seq.as_list().begin(), seq.as_list().end());
      return Value::list(std::move(l));
    }
    if (!a.is_number() || !b.is_number())
      throw Error("unsupported operand types for " + op + ": '" + a.type_name() + "' and '" + b.type_name() + "'");
    const bool ints = !a.is_float() && !b.is_float();
    if (op == "/" || op == "//" || op == "%") {
      if (ints ? b.as_int() == 0 : b.as_double() == 0.0) throw Error("division by zero");
    }
    if (ints) {
      const int64_t x = a.as_int(), y = b.as_int();
      int64_t r = 0;
      // Python's ints do not overflow; ours refuse to rather than wrap.
      if (op == "+" || op == "-" || op == "*") {
        const bool over = op == "+" ? __builtin_add_overflow(x, y, &r)
                          : op == "-" ? __builtin_sub_overflow(x, y, &r)
                                      : __builtin_mul_overflow(x, y, &r);
        if (over) throw Error("integer overflow in " + op);
        return r;
      }
      if (op == "/") return static_cast<double>(x) / static_cast<double>(y);
      if (op == "//" || op == "%") {
        if (y == -1) return op == "//" ? Value(-x) : Value(int64_t{0});  // INT64_MIN / -1 overflows
        int64_t q = x / y, r = x % y;
        if (r != 0 && ((r < 0) != (y < 0))) --q, r += y;  // Python rounds toward -infinity
        return op == "//" ? q : r;
      }
      if (op == "**") {
        const double p = std::pow(static_cast<double>(x), static_cast<double>(y));
        if (y < 0) return p;
        if (!(std::fabs(p) < 9.2e18)) throw Error("integer overflow in **");
        return static_cast<int64_t>(p);
      }
    }
    const double x = a.as_double(), y = b.as_double();
    if (op == "+") return x + y;
    if (op == "-") return x - y;
    if (op == "*") return x * y;
    if (op == "/") return x / y;
    if (op == "//") return std::floor(x / y);
    if (op == "%") return x - y * std::floor(x / y);
    if (op == "**") return std::pow(x, y);
    throw Error("unknown operator " + op);
  }

  std::shared_ptr<Frame> frame_;
  long steps_ = 0;
  int depth_ = 0;
};

}  // namespace

std::string render(const Body& program, std::shared_ptr<Frame> globals) {
  Interpreter in(std::move(globals));
  std::string out;
  in.run(program, out);
  return out;
}

}  // namespace hart::jinja
