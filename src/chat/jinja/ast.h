// The parsed form of a template: expressions and statements, as the parser builds them and the
// evaluator walks them. Every node keeps its source line for error messages.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chat/jinja/value.h"

namespace hart::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum Kind {
    Literal,  // value
    Name,     // name
    ListLit,  // args: the items (also tuples)
    DictLit,  // args: key, value, key, value, ...
    Attr,     // args[0].name
    Index,    // args[0][args[1]]
    Slice,    // args[0][args[1]:args[2]:args[3]], each bound may be null
    Call,     // args[0](args[1..], kwargs)
    Filter,   // args[0] | name(args[1..], kwargs)
    Test,     // args[0] is [not] name(args[1..])
    Unary,    // name: "not" or "-" or "+"; args[0]
    Binary,   // name: the operator ("and", "or", "in", "not in", "==", "+", ...); args[0], args[1]
    Cond,     // args[1] if args[0] else args[2] (args[2] may be null)
  };
  Kind kind;
  int line = 0;
  Value value;
  std::string name;
  bool negated = false;
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
};

struct Stmt;
using Body = std::vector<std::unique_ptr<Stmt>>;

struct Stmt {
  enum Kind {
    Text,      // text
    Output,    // {{ expr }}
    If,        // conds[i] -> bodies[i]; a trailing extra body is the else
    For,       // for targets in expr [if cond]: bodies[0], else bodies[1]
    Set,       // targets = expr, or attr set (targets[0].attr), or block set (bodies[0])
    Macro,     // name(params) bodies[0]; defaults in conds (null: none)
    Break,
    Continue,
    FilterBlock,  // expr is the filter chain applied to a Name "" placeholder; bodies[0]
    CallBlock,    // {% call(params) expr %} bodies[0]: `caller()` renders the body
  };
  Kind kind;
  int line = 0;
  std::string text;
  std::string attr;
  ExprPtr expr;
  std::vector<std::string> targets;
  std::vector<ExprPtr> conds;
  std::vector<Body> bodies;
};

}  // namespace hart::jinja
