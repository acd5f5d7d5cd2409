// Base64 (RFC 4648's standard alphabet, '=' padding): embeddings sent as bytes (encoding_format
// "base64") and images received in data: URLs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hart {

std::string base64_encode(const void* data, size_t n);
// The bytes, or nothing when `text` is not base64: a character outside the alphabet, a length
// that is no multiple of 4 (after whitespace, which is skipped as MIME writers wrap lines), or
// padding anywhere but at the end.
std::optional<std::vector<uint8_t>> base64_decode(std::string_view text);

}  // namespace hart
