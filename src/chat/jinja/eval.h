// Walks a parsed template (ast.h) and writes its output. Scoping follows Jinja2: each for-loop
// iteration and each macro call gets its own frame, `if` does not; `set` writes the innermost
// frame, so only namespace() objects carry values out of a loop. Work is bounded (kMaxSteps loop
// iterations and calls, kMaxCallDepth nested macro calls, kMaxString bytes per string) so no
// template can hang or exhaust the stack.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>

#include "chat/jinja/ast.h"
#include "common/error.h"

namespace hart::jinja {

inline constexpr long kMaxSteps = 1'000'000;
inline constexpr int kMaxCallDepth = 100;

struct Frame {
  std::unordered_map<std::string, Value> vars;
  std::shared_ptr<Frame> parent;
};

// raise_exception(msg) in a template: what() is the template's message, unchanged.
class RaisedError : public Error {
 public:
  using Error::Error;
};

// Renders `program` with the variables of `globals`. Throws RaisedError for raise_exception and
// hart::Error ("template line N: ...") for any other failure.
std::string render(const Body& program, std::shared_ptr<Frame> globals);

}  // namespace hart::jinja
