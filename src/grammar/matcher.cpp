#include "grammar/matcher.h"

#include <algorithm>

namespace hart::grammar {
namespace {

// A grammar that keeps more stacks than this at once is too ambiguous to match in time
// (x? x? x? ... chains); it is refused instead of slowing the server down.
constexpr size_t kMaxStacks = 4096;

// The smallest code point a UTF-8 sequence of each length may encode (shorter forms are invalid).
constexpr char32_t kMinOfLength[5] = {0, 0, 0x80, 0x800, 0x10000};

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
  to.g_ = g_;
  if (pending_need_ == 0) {
    if (b < 0x80) {
      to.pending_need_ = 0;
      return accept_char(b, to);
    }
    const uint8_t need = (b >> 5) == 0x6 ? 1 : (b >> 4) == 0xE ? 2 : (b >> 3) == 0x1E ? 3 : 0;
    if (need == 0 || b == 0xC0 || b == 0xC1 || b > 0xF4) return false;  // not a lead byte
    to.pending_ = b & (0x3F >> need);
    to.pending_need_ = need;
    to.pending_len_ = uint8_t(need + 1);
  } else {
    if ((b & 0xC0) != 0x80) return false;
    to.pending_ = (pending_ << 6) | (b & 0x3F);
    to.pending_need_ = uint8_t(pending_need_ - 1);
    to.pending_len_ = pending_len_;
    if (to.pending_need_ == 0) {
      const char32_t c = to.pending_;
      if (c < kMinOfLength[pending_len_] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return false;  // overlong, surrogate
      return accept_char(c, to);
    }
  }
  // A character still unfinished: keep the stacks if some top can match one of the code points
  // these bytes can still become.
  const unsigned shift = 6u * to.pending_need_;
  const char32_t lo = std::max<char32_t>(to.pending_ << shift, kMinOfLength[to.pending_len_]);
  const char32_t hi = std::min<char32_t>((to.pending_ << shift) | ((char32_t(1) << shift) - 1), 0x10FFFF);
  if (lo > hi) return false;
  bool any = false;
  for (const Stack& st : stacks_)
    if (!st.empty() && g_->classes[st.back()->index].matches_some(lo, hi)) {
      any = true;
      break;
    }
  if (!any) return false;
  if (&to != this) to.stacks_ = stacks_;
  return true;
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
  return pending_need_ == 0 && !stacks_.empty() && stacks_.front().empty();  // sorted: empty first
}

bool Matcher::can_continue() const { return !stacks_.empty() && !stacks_.back().empty(); }

void Matcher::key(std::vector<uintptr_t>& out) const {
  out.clear();
  out.push_back(pending_);
  out.push_back(pending_need_);
  out.push_back(pending_len_);
  for (const Stack& st : stacks_) {
    out.push_back(st.size());
    for (const Symbol* s : st) out.push_back(reinterpret_cast<uintptr_t>(s));
  }
}

}  // namespace hart::grammar
