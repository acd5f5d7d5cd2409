// RWKV World vocabularies store each token as Python's escaped form of its bytes (repr(bytes)
// without the b'...': \n, \xe2\x80\x9c, \\, \'), so the bytes have to be recovered
// before the tokens can be matched against text or rendered.
#pragma once

#include <string>
#include <string_view>

namespace hart::tok {

// The bytes an RWKV token text stands for: \t \n \r and \xhh (two lower-case hex digits) as
// their bytes, a backslash before any other character as that character, the rest as it is.
// Throws hart::Error for a broken escape (a trailing backslash, \x without two hex digits).
std::string unescape_rwkv_token(std::string_view text);

}  // namespace hart::tok
