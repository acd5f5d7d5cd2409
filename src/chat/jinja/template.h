// A Jinja template as chat templates use it (the subset Hugging Face and llama.cpp render):
// parse once, render with a JSON context. The globals range(), namespace(), dict(),
// raise_exception() and strftime_now() are provided.
#pragma once

#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "chat/jinja/ast.h"
#include "chat/jinja/eval.h"

namespace hart::jinja {

class Template {
 public:
  // Throws hart::Error ("template line N: ...") for a syntax error.
  explicit Template(std::string_view source);

  // `context`: an object whose keys become variables; `now` is what strftime_now() formats.
  // Throws RaisedError (what(): the template's own message) for raise_exception, hart::Error
  // for any other failure.
  std::string render(const nlohmann::ordered_json& context, const std::tm& now) const;

 private:
  std::shared_ptr<const Body> body_;
};

}  // namespace hart::jinja
