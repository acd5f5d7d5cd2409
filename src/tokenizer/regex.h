// A compiled PCRE2 pattern in UTF + UCP mode (\p{L}, \s, ... follow Unicode), with `$`
// matching only at the very end of the subject. JIT-compiled where the platform has a JIT.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string_view>

namespace hart::tok {

class Regex {
 public:
  // Throws hart::Error naming the pattern and PCRE2's message when it does not compile.
  explicit Regex(std::string_view pattern);
  Regex(Regex&&) noexcept;
  Regex& operator=(Regex&&) noexcept;
  ~Regex();

  struct Match {
    size_t begin, end;  // byte offsets into the subject
  };
  // Leftmost match starting at or after byte `from`. `subject` must be valid UTF-8 and is all
  // the pattern sees: lookarounds and `$` stop at its ends.
  std::optional<Match> find(std::string_view subject, size_t from) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hart::tok
