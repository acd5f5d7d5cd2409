#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/regex.h"

#include <pcre2.h>

#include <string>

#include "common/error.h"

namespace hart::tok {

struct Regex::Impl {
  pcre2_code* code = nullptr;
  ~Impl() { pcre2_code_free(code); }
};

namespace {

std::string pcre2_message(int code) {
  PCRE2_UCHAR buf[256];
  pcre2_get_error_message(code, buf, sizeof buf);
  return reinterpret_cast<const char*>(buf);
}

struct MatchData {
  pcre2_match_data* data;
  MatchData() : data(pcre2_match_data_create(1, nullptr)) {
    if (!data) throw std::bad_alloc();
  }
  ~MatchData() { pcre2_match_data_free(data); }
};

}  // namespace

Regex::Regex(std::string_view pattern) : impl_(std::make_unique<Impl>()) {
  int err = 0;
  PCRE2_SIZE err_offset = 0;
  impl_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                              PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY, &err, &err_offset,
                              nullptr);
  if (!impl_->code)
    throw Error("bad pre-tokenizer regex at offset " + std::to_string(err_offset) + ": " +
                pcre2_message(err) + " in '" + std::string(pattern) + "'");
  // Without a JIT (some RISC-V builds) pcre2_match interprets the pattern: slower, same result.
  pcre2_jit_compile(impl_->code, PCRE2_JIT_COMPLETE);
}

Regex::Regex(Regex&&) noexcept = default;
Regex& Regex::operator=(Regex&&) noexcept = default;
Regex::~Regex() = default;

std::optional<Regex::Match> Regex::find(std::string_view subject, size_t from) const {
  thread_local MatchData md;
  const int rc = pcre2_match(impl_->code, reinterpret_cast<PCRE2_SPTR>(subject.data()),
                             subject.size(), from, PCRE2_NO_UTF_CHECK, md.data, nullptr);
  if (rc == PCRE2_ERROR_NOMATCH) return std::nullopt;
  if (rc < 0) throw Error("pre-tokenizer regex failed: " + pcre2_message(rc));
  const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md.data);
  return Match{ov[0], ov[1]};
}

}  // namespace hart::tok
