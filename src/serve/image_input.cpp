#include "serve/image_input.h"

#include "common/base64.h"
#include "common/sha256.h"
#include "serve/openai_api.h"
#include "vision/multimodal.h"

namespace hart::serve {

using Body = nlohmann::ordered_json;

namespace {

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// splitmix64's finalizer: every bit of the key depends on every bit of the seed and index.
uint64_t mix(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

ImageBytes image_url_bytes(const std::string& url, const std::string& where, const char* param) {
  std::string_view data = url;
  if (starts_with(url, "http://") || starts_with(url, "https://"))
    invalid_request(param, where + ": remote image URLs are not fetched by this server; send the image inline as a "
                                   "data: URL (data:image/png;base64,...)");
  if (starts_with(url, "file://")) invalid_request(param, where + ": file:// image URLs are not allowed");
  if (starts_with(url, "data:")) {
    const size_t comma = url.find(',');
    const std::string_view head = std::string_view(url).substr(0, comma);
    if (comma == std::string::npos || !starts_with(head, "data:image/"))
      invalid_request(param, where + ": the data: URL is not an image's (data:image/...;base64,...)");
    if (head.size() < 7 || head.substr(head.size() - 7) != ";base64")
      invalid_request(param, where + ": the image's data: URL must be base64 (data:image/...;base64,...)");
    data = std::string_view(url).substr(comma + 1);
  }
  std::optional<ImageBytes> bytes = base64_decode(data);
  if (!bytes || bytes->empty()) invalid_request(param, where + ": the image is not valid base64");
  return std::move(*bytes);
}

std::vector<ImageBytes> take_images(Body& messages) {
  std::vector<ImageBytes> out;
  if (!messages.is_array()) return out;  // the chat template says what is wrong with it
  for (size_t i = 0; i < messages.size(); i++) {
    Body& m = messages[i];
    if (!m.is_object() || !m.contains("content") || !m["content"].is_array()) continue;
    Body& parts = m["content"];
    for (size_t k = 0; k < parts.size(); k++) {
      Body& p = parts[k];
      if (!p.is_object() || p.value("type", Body()) != "image_url") continue;
      const std::string where = "messages[" + std::to_string(i) + "].content[" + std::to_string(k) + "]";
      const auto iu = p.find("image_url");
      // {"url": "..."}, or the url alone (what some clients send, and llama-server reads too).
      const Body* url = iu == p.end() ? nullptr : iu->is_object() && iu->contains("url") ? &(*iu)["url"] : &*iu;
      if (!url || !url->is_string()) invalid_request("messages", where + ".image_url.url must be a string");
      out.push_back(image_url_bytes(url->get<std::string>(), where, "messages"));
      p = Body{{"type", "media_marker"}, {"text", std::string(vision::kMediaMarker)}};
    }
  }
  return out;
}

bool has_images(const Body& messages) {
  if (!messages.is_array()) return false;
  for (const Body& m : messages)
    if (m.is_object() && m.contains("content") && m["content"].is_array())
      for (const Body& p : m["content"])
        if (p.is_object() && p.value("type", Body()) == "image_url") return true;
  return false;
}

std::vector<int32_t> content_keys(const vision::RgbImage& img, int n) {
  Sha256 h;
  const int32_t size[2] = {img.width, img.height};
  h.update(size, sizeof size);
  h.update(img.rgb.data(), img.rgb.size());
  const uint64_t seed = std::stoull(h.hex_digest().substr(0, 16), nullptr, 16);
  std::vector<int32_t> keys(static_cast<size_t>(n));
  for (int i = 0; i < n; i++) keys[size_t(i)] = int32_t(uint32_t(mix(seed + uint64_t(i))) | 0x80000000u);
  return keys;
}

ImageEncoder::ImageEncoder(const vision::ClipModel& clip, BackendSet backends)
    : clip_(clip), encoder_(clip, std::move(backends)) {}

ImagePrompt ImageEncoder::encode(const Tokenizer& tok, std::string_view prompt, const std::vector<ImageBytes>& images,
                                 const char* param) {
  std::vector<vision::RgbImage> decoded;
  for (size_t i = 0; i < images.size(); i++) try {
      decoded.push_back(vision::decode_image(images[i]));
    } catch (const Error& e) {
      invalid_request(param, "image " + std::to_string(i + 1) + " of the request: " + e.what());
    }
  vision::EncodedPrompt p;
  try {
    std::lock_guard lock(mutex_);
    p = vision::encode_prompt(clip_, encoder_, tok, prompt, decoded, /*add_special=*/true);
  } catch (const Error& e) {
    invalid_request(param, e.what());
  }
  if (!p.chunks.empty() && p.chunks.back().is_tile())
    invalid_request(param, "the prompt ends with an image: nothing follows it to answer from");
  // Each image's content keys run on across its tiles.
  std::vector<std::vector<int32_t>> keys(decoded.size());
  std::vector<size_t> used(decoded.size(), 0);
  for (size_t i = 0; i < decoded.size(); i++) {
    size_t n = 0;
    for (const auto& t : p.embd[i]) n += t.size() / p.embd_width;
    keys[i] = content_keys(decoded[i], int(n));
  }
  ImagePrompt out;
  auto runs = std::make_shared<std::vector<PromptEmbeddings>>();
  for (const vision::PromptChunk& c : p.chunks) {
    if (!c.is_tile()) {
      out.ids.insert(out.ids.end(), c.tokens.begin(), c.tokens.end());
      continue;
    }
    const std::vector<float>& rows = p.tile(c);
    const size_t n = rows.size() / p.embd_width;
    const auto& k = keys[size_t(c.image)];
    size_t& u = used[size_t(c.image)];
    // Tiles back to back are one run.
    if (runs->empty() || size_t(runs->back().begin) + runs->back().embd.size() / p.embd_width != out.ids.size())
      runs->push_back({int32_t(out.ids.size()), {}});
    runs->back().embd.insert(runs->back().embd.end(), rows.begin(), rows.end());
    out.ids.insert(out.ids.end(), k.begin() + long(u), k.begin() + long(u + n));
    u += n;
  }
  out.images = std::move(runs);
  return out;
}

}  // namespace hart::serve
