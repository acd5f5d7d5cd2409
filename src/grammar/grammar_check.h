// Whole-grammar checks the parser runs after reading every rule.
#pragma once

#include "grammar/grammar.h"

namespace hart::grammar {

// Throws GrammarError naming a rule that can reach itself before consuming a character: the
// matcher expands rules at the front of its stacks and would never stop.
void check_no_left_recursion(const Grammar& g);

}  // namespace hart::grammar
