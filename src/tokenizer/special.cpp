#include "tokenizer/special.h"

#include <cctype>

namespace hart::tok {

namespace {

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// Cuts one text fragment at every occurrence of special token `id`, appending the pieces.
void cut(std::string_view text, int32_t id, const Vocab& v, std::vector<Fragment>& out) {
  const std::string_view needle = v.tokens[id].text;
  const bool lstrip = v.has(id, kAttrLstrip), rstrip = v.has(id, kAttrRstrip);
  for (size_t hit; (hit = text.find(needle)) != std::string_view::npos;) {
    std::string_view left = text.substr(0, hit);
    if (lstrip)
      while (!left.empty() && is_space(left.back())) left.remove_suffix(1);
    if (!left.empty()) out.push_back({kNoToken, left});
    out.push_back({id, needle});
    text.remove_prefix(hit + needle.size());
    if (rstrip)
      while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  }
  if (!text.empty()) out.push_back({kNoToken, text});
}

}  // namespace

std::vector<Fragment> split_special(std::string_view text, const Vocab& v, bool parse_special) {
  std::vector<Fragment> frags, next;
  if (!text.empty()) frags.push_back({kNoToken, text});
  for (int32_t id : v.specials) {
    if (!parse_special && v.has(id, kAttrControl | kAttrUnknown)) continue;
    next.clear();
    for (const Fragment& f : frags) {
      if (f.token != kNoToken || f.text.find(v.tokens[id].text) == std::string_view::npos)
        next.push_back(f);
      else
        cut(f.text, id, v, next);
    }
    frags.swap(next);
  }
  return frags;
}

}  // namespace hart::tok
