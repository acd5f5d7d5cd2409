// Images in requests: OpenAI's image_url content parts (Anthropic's image blocks and the
// Responses API's input_image parts are turned into them), as llama-server takes them: the part
// becomes a media marker in the chat template's text, the image's bytes come from a data: URL
// (data:image/...;base64,...) or bare base64. Remote (http, https) and file:// URLs are refused:
// the server fetches nothing. With --mmproj, the projector encodes each image and its
// embeddings take the marker's place in the prompt (vision/multimodal.h's layout); the prompt's
// ids there are the image's content keys, which the prefix cache matches like tokens.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "backend/backend_set.h"
#include "serve/request.h"
#include "tokenizer/tokenizer.h"
#include "vision/clip_model.h"
#include "vision/encoder.h"
#include "vision/image.h"

namespace hart::serve {

using ImageBytes = std::vector<uint8_t>;

// The bytes an image_url's url holds. Throws ApiError (400, naming `param`, the message saying
// `where`) for a remote or file URL, a data: URL that is not an image's or not base64, and text
// that is not base64.
ImageBytes image_url_bytes(const std::string& url, const std::string& where, const char* param);

// Replaces every image_url part of the chat messages' content arrays by a media marker part
// ({"type": "media_marker", "text": "<__media__>"}) and returns the images' bytes, in order.
std::vector<ImageBytes> take_images(nlohmann::ordered_json& messages);
// Some message's content has an image_url part.
bool has_images(const nlohmann::ordered_json& messages);

// An image's content keys, one per position it takes (n): negative ids (never a token) from a
// SHA-256 of its size and pixels, so that equal images key equal prompts and different ones
// part where they begin.
std::vector<int32_t> content_keys(const vision::RgbImage& img, int n);

struct ImagePrompt {
  std::vector<int32_t> ids;  // text tokens, and each image's content keys at its positions
  std::shared_ptr<const std::vector<PromptEmbeddings>> images;
};

// The server's projector (checked against the text model by the caller) and its encoder. One
// request's images are encoded at a time: the encoder's graph and buffers are its own.
class ImageEncoder {
 public:
  ImageEncoder(const vision::ClipModel& clip, BackendSet backends);
  // The prompt text, with one media marker per image, as the engine takes it. Throws ApiError
  // (400, naming `param`) for bytes that are not an image hart decodes (JPEG, PNG, BMP) or one
  // of too many pixels, and markers that are not one per image.
  ImagePrompt encode(const Tokenizer& tok, std::string_view prompt, const std::vector<ImageBytes>& images,
                     const char* param);

 private:
  const vision::ClipModel& clip_;
  std::mutex mutex_;
  vision::Encoder encoder_;
};

}  // namespace hart::serve
