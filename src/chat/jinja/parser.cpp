#include "chat/jinja/parser.h"

#include <algorithm>
#include <cstdlib>

#include "chat/jinja/lexer.h"
#include "common/error.h"

namespace hart::jinja {
namespace {

ExprPtr node(Expr::Kind kind, int line) {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->line = line;
  return e;
}

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : t_(std::move(tokens)) {}

  Body parse_all() {
    std::string stop;
    Body body = parse_body({}, stop, 0);
    return body;
  }

 private:
  // Guards recursion: every nested expression or block goes through one of these.
  struct Depth {
    explicit Depth(Parser& p) : p(p) {
      if (++p.depth_ > kMaxDepth) p.fail("template nested too deeply");
    }
    ~Depth() { --p.depth_; }
    Parser& p;
  };

  const Token& peek(size_t ahead = 0) const { return t_[std::min(i_ + ahead, t_.size() - 1)]; }
  const Token& next() {
    const Token& t = t_[i_];
    if (i_ + 1 < t_.size()) ++i_;
    return t;
  }
  bool is_op(const char* op, size_t ahead = 0) const {
    return peek(ahead).kind == Tok::Op && peek(ahead).text == op;
  }
  bool is_name(const char* name, size_t ahead = 0) const {
    return peek(ahead).kind == Tok::Name && peek(ahead).text == name;
  }
  bool accept_op(const char* op) {
    if (!is_op(op)) return false;
    next();
    return true;
  }
  bool accept_name(const char* name) {
    if (!is_name(name)) return false;
    next();
    return true;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw Error("template line " + std::to_string(peek().line) + ": " + what);
  }
  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Tok::End: return "end of template";
      case Tok::Text: return "text";
      case Tok::ExprClose: return "'}}'";
      case Tok::StmtClose: return "'%}'";
      case Tok::ExprOpen: return "'{{'";
      case Tok::StmtOpen: return "'{%'";
      case Tok::String: return "string";
      default: return "'" + t.text + "'";
    }
  }
  void expect_op(const char* op) {
    if (!accept_op(op)) fail(std::string("expected '") + op + "', found " + describe(peek()));
  }
  void expect(Tok kind, const char* what) {
    if (peek().kind != kind) fail(std::string("expected ") + what + ", found " + describe(peek()));
    next();
  }
  std::string expect_name() {
    if (peek().kind != Tok::Name) fail("expected a name, found " + describe(peek()));
    return next().text;
  }

  // Statements until one of `stops` ({% name ... %}); the stop's name is consumed and returned
  // in `stop`, the rest of its tag is left to the caller.
  Body parse_body(const std::vector<std::string>& stops, std::string& stop, int open_line) {
    Depth d(*this);
    Body body;
    for (;;) {
      const Token& t = peek();
      if (t.kind == Tok::End) {
        if (stops.empty()) return body;
        throw Error("template line " + std::to_string(open_line) + ": block is not closed (expected {% " +
                    stops.back() + " %})");
      }
      if (t.kind == Tok::Text) {
        auto s = std::make_unique<Stmt>();
        s->kind = Stmt::Text;
        s->line = t.line;
        s->text = next().text;
        body.push_back(std::move(s));
      } else if (t.kind == Tok::ExprOpen) {
        auto s = std::make_unique<Stmt>();
        s->kind = Stmt::Output;
        s->line = next().line;
        s->expr = parse_expr();
        expect(Tok::ExprClose, "'}}'");
        body.push_back(std::move(s));
      } else if (t.kind == Tok::StmtOpen) {
        next();
        if (peek().kind == Tok::Name && std::find(stops.begin(), stops.end(), peek().text) != stops.end()) {
          stop = next().text;
          return body;
        }
        body.push_back(parse_statement());
      } else {
        fail("unexpected " + describe(t));
      }
    }
  }

  std::unique_ptr<Stmt> parse_statement() {
    auto s = std::make_unique<Stmt>();
    s->line = peek().line;
    const std::string tag = expect_name();
    std::string stop;
    if (tag == "if") {
      s->kind = Stmt::If;
      s->conds.push_back(parse_expr());
      for (;;) {
        expect(Tok::StmtClose, "'%}'");
        s->bodies.push_back(parse_body({"elif", "else", "endif"}, stop, s->line));
        if (stop == "elif") {
          s->conds.push_back(parse_expr());
        } else if (stop == "else") {
          expect(Tok::StmtClose, "'%}'");
          s->bodies.push_back(parse_body({"endif"}, stop, s->line));
          break;
        } else {
          break;
        }
      }
    } else if (tag == "for") {
      s->kind = Stmt::For;
      do s->targets.push_back(expect_name());
      while (accept_op(","));
      if (!accept_name("in")) fail("expected 'in' in for loop");
      s->expr = parse_or();
      if (accept_name("if")) s->conds.push_back(parse_or());
      if (is_name("recursive")) fail("recursive for loops are not supported");
      expect(Tok::StmtClose, "'%}'");
      s->bodies.push_back(parse_body({"else", "endfor"}, stop, s->line));
      if (stop == "else") {
        expect(Tok::StmtClose, "'%}'");
        s->bodies.push_back(parse_body({"endfor"}, stop, s->line));
      }
    } else if (tag == "set") {
      s->kind = Stmt::Set;
      s->targets.push_back(expect_name());
      if (accept_op(".")) s->attr = expect_name();
      while (s->attr.empty() && accept_op(",")) s->targets.push_back(expect_name());
      if (accept_op("=")) {
        s->expr = parse_expr();
        if (is_op(",")) s->expr = parse_tuple_rest(std::move(s->expr));
      } else {
        if (s->targets.size() != 1 || !s->attr.empty()) fail("a block set assigns one name");
        expect(Tok::StmtClose, "'%}'");
        s->bodies.push_back(parse_body({"endset"}, stop, s->line));
      }
    } else if (tag == "macro") {
      s->kind = Stmt::Macro;
      s->text = expect_name();
      parse_params(*s);
      expect(Tok::StmtClose, "'%}'");
      s->bodies.push_back(parse_body({"endmacro"}, stop, s->line));
      if (peek().kind == Tok::Name) next();  // {% endmacro name %}
    } else if (tag == "call") {
      s->kind = Stmt::CallBlock;
      if (is_op("(")) parse_params(*s);
      s->expr = parse_expr();
      if (s->expr->kind != Expr::Call) fail("call block needs a macro call");
      expect(Tok::StmtClose, "'%}'");
      s->bodies.push_back(parse_body({"endcall"}, stop, s->line));
    } else if (tag == "filter") {
      s->kind = Stmt::FilterBlock;
      // {% filter name(args) | more %}: the first filter has no leading '|'.
      auto first = node(Expr::Filter, s->line);
      first->name = expect_name();
      first->args.push_back(node(Expr::Name, s->line));
      if (is_op("(")) parse_call_args(*first);
      s->expr = parse_filters(std::move(first));
      expect(Tok::StmtClose, "'%}'");
      s->bodies.push_back(parse_body({"endfilter"}, stop, s->line));
    } else if (tag == "generation") {
      // Hugging Face's marker of assistant text (for training masks): renders its body.
      s->kind = Stmt::If;
      s->conds.push_back(node(Expr::Literal, s->line));
      s->conds.back()->value = true;
      expect(Tok::StmtClose, "'%}'");
      s->bodies.push_back(parse_body({"endgeneration"}, stop, s->line));
    } else if (tag == "break" || tag == "continue") {
      s->kind = tag == "break" ? Stmt::Break : Stmt::Continue;
    } else {
      throw Error("template line " + std::to_string(s->line) + ": unknown tag '" + tag + "'");
    }
    expect(Tok::StmtClose, "'%}'");
    return s;
  }

  // (a, b=default, ...) of a macro or call block: names in targets, defaults in conds.
  void parse_params(Stmt& s) {
    expect_op("(");
    while (!accept_op(")")) {
      s.targets.push_back(expect_name());
      s.conds.push_back(accept_op("=") ? parse_expr() : nullptr);
      if (!is_op(")")) expect_op(",");
    }
  }

  ExprPtr parse_tuple_rest(ExprPtr first) {
    auto list = node(Expr::ListLit, first->line);
    list->args.push_back(std::move(first));
    while (accept_op(",")) {
      if (peek().kind == Tok::StmtClose || peek().kind == Tok::ExprClose || is_op(")")) break;
      list->args.push_back(parse_expr());
    }
    return list;
  }

  ExprPtr parse_expr() {
    Depth d(*this);
    ExprPtr e = parse_or();
    if (!is_name("if")) return e;
    const int line = next().line;
    auto c = node(Expr::Cond, line);
    c->args.push_back(parse_or());
    c->args.push_back(std::move(e));
    c->args.push_back(accept_name("else") ? parse_expr() : nullptr);
    return c;
  }

  ExprPtr binary(const std::string& op, ExprPtr a, ExprPtr b) {
    auto e = node(Expr::Binary, a->line);
    e->name = op;
    e->args.push_back(std::move(a));
    e->args.push_back(std::move(b));
    return e;
  }

  ExprPtr parse_or() {
    ExprPtr e = parse_and();
    while (accept_name("or")) e = binary("or", std::move(e), parse_and());
    return e;
  }
  ExprPtr parse_and() {
    ExprPtr e = parse_not();
    while (accept_name("and")) e = binary("and", std::move(e), parse_not());
    return e;
  }
  ExprPtr parse_not() {
    if (is_name("not")) {
      Depth d(*this);
      auto e = node(Expr::Unary, next().line);
      e->name = "not";
      e->args.push_back(parse_not());
      return e;
    }
    return parse_compare();
  }
  ExprPtr parse_compare() {
    ExprPtr e = parse_add();
    for (;;) {
      static const char* const kOps[] = {"==", "!=", "<", "<=", ">", ">="};
      const char* op = nullptr;
      for (const char* o : kOps)
        if (is_op(o)) op = o;
      if (op) {
        next();
        e = binary(op, std::move(e), parse_add());
      } else if (accept_name("in")) {
        e = binary("in", std::move(e), parse_add());
      } else if (is_name("not") && is_name("in", 1)) {
        next();
        next();
        e = binary("not in", std::move(e), parse_add());
      } else {
        return e;
      }
    }
  }
  // One level of left-associative binary operators: operands from `operand`, joined by `ops`.
  template <class Operand>
  ExprPtr left_assoc(std::initializer_list<const char*> ops, Operand operand) {
    ExprPtr e = (this->*operand)();
    for (;;) {
      const char* op = nullptr;
      for (const char* o : ops)
        if (is_op(o)) op = o;
      if (!op) return e;
      next();
      e = binary(op, std::move(e), (this->*operand)());
    }
  }
  ExprPtr parse_add() { return left_assoc({"+", "-"}, &Parser::parse_concat); }
  ExprPtr parse_concat() { return left_assoc({"~"}, &Parser::parse_mul); }
  ExprPtr parse_mul() { return left_assoc({"*", "/", "//", "%"}, &Parser::parse_pow); }
  ExprPtr parse_pow() { return left_assoc({"**"}, &Parser::parse_unary_filtered); }
  ExprPtr parse_unary_filtered() { return parse_unary(true); }
  ExprPtr parse_unary(bool with_filters) {
    Depth d(*this);
    ExprPtr e;
    if (is_op("-") || is_op("+")) {
      e = node(Expr::Unary, peek().line);
      e->name = next().text;
      e->args.push_back(parse_unary(false));
    } else {
      e = parse_primary();
    }
    e = parse_postfix(std::move(e));
    return with_filters ? parse_filters(std::move(e)) : std::move(e);
  }

  ExprPtr parse_primary() {
    const Token& t = peek();
    switch (t.kind) {
      case Tok::Name: {
        next();
        auto e = node(Expr::Literal, t.line);
        if (t.text == "true" || t.text == "True") e->value = true;
        else if (t.text == "false" || t.text == "False") e->value = false;
        else if (t.text == "none" || t.text == "None") e->value = nullptr;
        else {
          e->kind = Expr::Name;
          e->name = t.text;
        }
        return e;
      }
      case Tok::String: {
        auto e = node(Expr::Literal, t.line);
        std::string s;
        while (peek().kind == Tok::String) s += next().text;  // "a" "b" is "ab", as in Python
        e->value = std::move(s);
        return e;
      }
      case Tok::Int: {
        auto e = node(Expr::Literal, t.line);
        errno = 0;
        const long long v = std::strtoll(t.text.c_str(), nullptr, 10);
        if (errno == ERANGE) fail("integer literal out of range");
        e->value = int64_t{v};
        next();
        return e;
      }
      case Tok::Float: {
        auto e = node(Expr::Literal, t.line);
        e->value = std::strtod(t.text.c_str(), nullptr);
        next();
        return e;
      }
      case Tok::Op:
        if (t.text == "(") {
          next();
          if (accept_op(")")) return node(Expr::ListLit, t.line);
          ExprPtr e = parse_expr();
          if (is_op(",")) e = parse_tuple_rest(std::move(e));
          expect_op(")");
          return e;
        }
        if (t.text == "[") {
          next();
          auto e = node(Expr::ListLit, t.line);
          while (!accept_op("]")) {
            e->args.push_back(parse_expr());
            if (!is_op("]")) expect_op(",");
          }
          return e;
        }
        if (t.text == "{") {
          next();
          auto e = node(Expr::DictLit, t.line);
          while (!accept_op("}")) {
            e->args.push_back(parse_expr());
            expect_op(":");
            e->args.push_back(parse_expr());
            if (!is_op("}")) expect_op(",");
          }
          return e;
        }
        break;
      default:
        break;
    }
    fail("unexpected " + describe(t));
  }

  void parse_call_args(Expr& call) {
    expect_op("(");
    while (!accept_op(")")) {
      if (peek().kind == Tok::Name && is_op("=", 1)) {
        std::string name = next().text;
        next();
        call.kwargs.emplace_back(std::move(name), parse_expr());
      } else {
        call.args.push_back(parse_expr());
      }
      if (!is_op(")")) expect_op(",");
    }
  }

  ExprPtr parse_postfix(ExprPtr e) {
    for (;;) {
      if (is_op(".")) {
        const int line = next().line;
        auto a = node(Expr::Attr, line);
        if (peek().kind == Tok::Int) {  // x.0 is x[0]
          a->kind = Expr::Index;
          a->args.push_back(std::move(e));
          a->args.push_back(parse_primary());
        } else {
          a->name = expect_name();
          a->args.push_back(std::move(e));
        }
        e = std::move(a);
      } else if (is_op("[")) {
        const int line = next().line;
        e = parse_subscript(std::move(e), line);
      } else if (is_op("(")) {
        auto c = node(Expr::Call, e->line);
        c->args.push_back(std::move(e));
        parse_call_args(*c);
        e = std::move(c);
      } else {
        return e;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr obj, int line) {
    ExprPtr parts[3];
    int n = 0;
    bool slice = false;
    for (;;) {
      if (!is_op(":") && !is_op("]")) parts[n] = parse_expr();
      if (accept_op("]")) break;
      expect_op(":");
      slice = true;
      if (++n > 2) fail("too many ':' in slice");
    }
    auto e = node(slice ? Expr::Slice : Expr::Index, line);
    e->args.push_back(std::move(obj));
    if (!slice && !parts[0]) fail("empty subscript");
    for (int k = 0; k < (slice ? 3 : 1); ++k) e->args.push_back(std::move(parts[k]));
    return e;
  }

  // `| name(args)` filters and `is [not] name args` tests after an operand.
  ExprPtr parse_filters(ExprPtr e) {
    for (;;) {
      if (accept_op("|")) {
        auto f = node(Expr::Filter, e->line);
        f->name = expect_name();
        f->args.push_back(std::move(e));
        if (is_op("(")) parse_call_args(*f);
        e = std::move(f);
      } else if (is_name("is")) {
        auto t = node(Expr::Test, next().line);
        t->negated = accept_name("not");
        t->name = expect_name();
        t->args.push_back(std::move(e));
        if (is_op("(")) {
          parse_call_args(*t);
        } else if (takes_bare_test_arg()) {
          t->args.push_back(parse_postfix(parse_primary()));
        }
        e = std::move(t);
      } else {
        return e;
      }
    }
  }

  // `x is divisibleby 3`, `x is sameas false`: a test's one argument may follow without parens.
  bool takes_bare_test_arg() const {
    const Token& t = peek();
    if (t.kind == Tok::String || t.kind == Tok::Int || t.kind == Tok::Float) return true;
    if (t.kind == Tok::Op) return t.text == "[" || t.text == "{";
    if (t.kind != Tok::Name) return false;
    static const char* const kKeywords[] = {"else", "or", "and", "if", "in", "is", "not"};
    for (const char* k : kKeywords)
      if (t.text == k) return false;
    return true;
  }

  std::vector<Token> t_;
  size_t i_ = 0;
  int depth_ = 0;
};

}  // namespace

Body parse(std::string_view source) { return Parser(tokenize(source)).parse_all(); }

}  // namespace hart::jinja
