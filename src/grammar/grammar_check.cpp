#include "grammar/grammar_check.h"

namespace hart::grammar {
namespace {

// nullable[r]: rule r can match the empty string (a fixpoint over all rules).
std::vector<bool> nullable_rules(const Grammar& g) {
  std::vector<bool> nullable(g.rules.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < g.rules.size(); r++) {
      if (nullable[r]) continue;
      for (const auto& alt : g.rules[r].alternatives) {
        bool all = true;
        for (const Symbol& s : alt) {
          if (s.kind == Symbol::END) break;
          if (s.kind == Symbol::CHARS || !nullable[s.index]) {
            all = false;
            break;
          }
        }
        if (all) {
          nullable[r] = changed = true;
          break;
        }
      }
    }
  }
  return nullable;
}

}  // namespace

void check_no_left_recursion(const Grammar& g) {
  const std::vector<bool> nullable = nullable_rules(g);
  // Edges r -> s where s can start r; a cycle in them is left recursion. Iterative DFS with
  // colors (0 new, 1 on the path, 2 done) so a deep grammar cannot overflow the call stack.
  std::vector<std::vector<uint32_t>> starts(g.rules.size());
  for (size_t r = 0; r < g.rules.size(); r++)
    for (const auto& alt : g.rules[r].alternatives)
      for (const Symbol& s : alt) {
        if (s.kind != Symbol::RULE) break;
        starts[r].push_back(s.index);
        if (!nullable[s.index]) break;
      }
  std::vector<uint8_t> color(g.rules.size(), 0);
  for (size_t r0 = 0; r0 < g.rules.size(); r0++) {
    if (color[r0]) continue;
    std::vector<std::pair<uint32_t, size_t>> path{{uint32_t(r0), 0}};
    color[r0] = 1;
    while (!path.empty()) {
      auto& [r, next] = path.back();
      if (next == starts[r].size()) {
        color[r] = 2;
        path.pop_back();
        continue;
      }
      const uint32_t s = starts[r][next++];
      if (color[s] == 1) {
        // Name the user's rule, not a helper made for a group.
        throw GrammarError("grammar: rule '" + g.rules[s].name + "' is left-recursive (it can start with itself)");
      }
      if (color[s] == 0) {
        color[s] = 1;
        path.push_back({s, 0});
      }
    }
  }
}

}  // namespace hart::grammar
