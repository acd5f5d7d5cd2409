// RWKV World ("rwkv") as llama.cpp runs it: every token's bytes go into one trie, and the text
// is cut greedily, at each position the longest token that starts there. The text's bytes are
// matched as they are (no normalization, no UTF-8 repair): every byte has a token of its own.
#include "tokenizer/rwkv.h"

#include <cstdio>
#include <unordered_map>
#include <utility>

#include "common/error.h"
#include "tokenizer/encoder.h"

namespace hart::tok {

namespace {

int lower_hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Byte strings to token ids. Node 0 is the root; each edge (node, next byte) is one hash map
// entry, so a node costs no table of 256 children.
class ByteTrie {
 public:
  // A later token with the same bytes replaces the earlier one, as in llama.cpp's trie.
  void insert(std::string_view bytes, int32_t id) {
    uint32_t node = 0;
    for (char c : bytes) {
      const auto [it, fresh] = edges_.try_emplace(edge(node, c), static_cast<uint32_t>(token_.size()));
      if (fresh) token_.push_back(kNoToken);
      node = it->second;
    }
    token_[node] = id;
  }

  // The longest token `text` starts with and its length in bytes, or {kNoToken, 0}.
  std::pair<int32_t, size_t> longest_prefix(std::string_view text) const {
    std::pair<int32_t, size_t> best{kNoToken, 0};
    uint32_t node = 0;
    for (size_t i = 0; i < text.size(); ++i) {
      const auto it = edges_.find(edge(node, text[i]));
      if (it == edges_.end()) break;
      node = it->second;
      if (token_[node] != kNoToken) best = {token_[node], i + 1};
    }
    return best;
  }

 private:
  static uint64_t edge(uint32_t node, char c) { return uint64_t{node} << 8 | static_cast<uint8_t>(c); }

  std::unordered_map<uint64_t, uint32_t> edges_;
  std::vector<int32_t> token_{kNoToken};  // per node: the token ending there
};

class RwkvEncoder final : public Encoder {
 public:
  // Every token goes into the trie, control and unused ones included (llama.cpp's): "<s>" in
  // plain text is token <s> even when special tokens are not parsed.
  explicit RwkvEncoder(const Vocab& vocab) : v_(vocab) {
    for (int32_t id = 0; id < vocab.size(); ++id)
      trie_.insert(unescape_rwkv_token(vocab.tokens[id].text), id);
  }

  void encode(std::string_view text, bool, std::vector<int32_t>& out) const override {
    for (size_t pos = 0; pos < text.size();) {
      const auto [id, n] = trie_.longest_prefix(text.substr(pos));
      if (id != kNoToken) {
        out.push_back(id);
        pos += n;
        continue;
      }
      if (v_.unk == kNoToken) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02X", static_cast<uint8_t>(text[pos]));
        throw Error(std::string("cannot encode byte ") + hex +
                    ": no RWKV token starts with it and there is no <unk> token");
      }
      out.push_back(v_.unk);
      ++pos;
    }
  }

 private:
  const Vocab& v_;
  ByteTrie trie_;
};

}  // namespace

std::string unescape_rwkv_token(std::string_view text) {
  const auto broken = [&](const char* why) {
    return Error("broken escape in RWKV token text '" + std::string(text) + "': " + why);
  };
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') {
      out += text[i];
      continue;
    }
    if (++i == text.size()) throw broken("a backslash ends it");
    switch (text[i]) {
      case 't': out += '\t'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 'x': {
        const int hi = i + 1 < text.size() ? lower_hex_digit(text[i + 1]) : -1;
        const int lo = i + 2 < text.size() ? lower_hex_digit(text[i + 2]) : -1;
        if (hi < 0 || lo < 0) throw broken("\\x needs two lower-case hex digits");
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        break;
      }
      default: out += text[i];  // \\ and \' (and anything else) stand for the character itself
    }
  }
  return out;
}

std::unique_ptr<Encoder> make_rwkv_encoder(const Vocab& vocab) {
  return std::make_unique<RwkvEncoder>(vocab);
}

}  // namespace hart::tok
