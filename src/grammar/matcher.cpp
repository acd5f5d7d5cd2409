#include "grammar/matcher.h"

#include <algorithm>

namespace hart::grammar {
namespace {

// A grammar that keeps more stacks than this at once is too ambiguous to match in time
// (x? x? x? ... chains); it is refused instead of slowing the server down.
constexpr size_t kMaxStacks = 4096;

}  // namespace

Matcher::Matcher(const Grammar& g) : g_(&g) {
  if (g.root >= g.rules.size()) throw GrammarError("grammar: no root rule");
  static const Symbol kEnd{Symbol::END, 0};
  // A root reference followed by nothing: expanding it yields one stack per root alternative.
  const Symbol root[2] = {{Symbol::RULE, g.root}, kEnd};
  Stack start{&root[0]};
  // expand() only dereferences root[0] and root[1] here, before they go out of scope: the
  // continuation after root is END, so no pointer to them survives in stacks_.
  expand(std::move(start), stacks_);
  finish_set(stacks_);
}

// Replaces RULE tops by each of the rule's alternatives until every stack's top is a character
// class (or the stack is empty). Iterative: a chain of rules cannot overflow the call stack.
void Matcher::expand(Stack stack, std::vector<Stack>& out) const {
  std::vector<Stack> work;
  work.push_back(std::move(stack));
  while (!work.empty()) {
    Stack s = std::move(work.back());
    work.pop_back();
    if (s.empty() || s.back()->kind == Symbol::CHARS) {
      out.push_back(std::move(s));
      if (out.size() > kMaxStacks) throw GrammarError("grammar: too ambiguous (more than 4096 parse stacks at once)");
      continue;
    }
    const Symbol* top = s.back();
    s.pop_back();
    if ((top + 1)->kind != Symbol::END) s.push_back(top + 1);
    for (const auto& alt : g_->rules[top->index].alternatives) {
      Stack next = s;
      if (alt[0].kind != Symbol::END) next.push_back(&alt[0]);
      work.push_back(std::move(next));
    }
  }
}

void Matcher::finish_set(std::vector<Stack>& set) const {
  std::sort(set.begin(), set.end());
  set.erase(std::unique(set.begin(), set.end()), set.end());
}

bool Matcher::accept_char(char32_t c, Matcher& to) const {
  to.g_ = g_;
  to.utf8_ = Utf8Decoder();
  to.stacks_.clear();
  for (const Stack& st : stacks_) {
    if (st.empty() || !g_->classes[st.back()->index].matches(c)) continue;
    const Symbol* top = st.back();
    Stack s(st.begin(), st.end() - 1);
    if ((top + 1)->kind != Symbol::END) s.push_back(top + 1);
    expand(std::move(s), to.stacks_);
  }
  finish_set(to.stacks_);
  return !to.stacks_.empty();
}

bool Matcher::step(uint8_t b, Matcher& to) const {
  to.utf8_ = utf8_;
  char32_t lo = 0, hi = 0;
  switch (to.utf8_.push(b, lo, hi)) {
    case Utf8Decoder::CHAR: return accept_char(lo, to);
    case Utf8Decoder::INVALID: return false;
    case Utf8Decoder::PENDING: break;
  }
  // Keep the stacks if some top can match one of the code points the bytes can still become.
  if (!may_start(lo, hi)) return false;
  to.g_ = g_;
  if (&to != this) to.stacks_ = stacks_;
  return true;
}

bool Matcher::may_start(char32_t lo, char32_t hi) const {
  for (const Stack& st : stacks_)
    if (!st.empty() && g_->classes[st.back()->index].matches_some(lo, hi)) return true;
  return false;
}

bool Matcher::feed_byte(uint8_t b) {
  Matcher next(*this);
  if (!step(b, next)) return false;
  *this = std::move(next);
  return true;
}

bool Matcher::feed(std::string_view bytes) {
  Matcher cur(*this), next(*this);
  for (char c : bytes) {
    if (!cur.step(uint8_t(c), next)) return false;
    std::swap(cur, next);
  }
  *this = std::move(cur);
  return true;
}

bool Matcher::complete() const {
  return utf8_.need == 0 && !stacks_.empty() && stacks_.front().empty();  // sorted: empty first
}

bool Matcher::can_continue() const { return !stacks_.empty() && !stacks_.back().empty(); }

void Matcher::key(std::vector<uintptr_t>& out) const {
  out.clear();
  out.push_back(utf8_.value);
  out.push_back(utf8_.need);
  out.push_back(utf8_.len);
  for (const Stack& st : stacks_) {
    out.push_back(st.size());
    for (const Symbol* s : st) out.push_back(reinterpret_cast<uintptr_t>(s));
  }
}

}  // namespace hart::grammar
