// Images through the server's request path and scheduler: image_url parts read as llama-server
// reads them (remote URLs refused), the engine's greedy tokens after an image equal to those of
// `hart run --image` (Session with the embeddings fed at the markers), and the prefix cache
// keyed on the image's pixels: the same image reused, another one not past where it begins.
#include "serve/image_input.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "common/base64.h"
#include "common/testdata.h"
#include "gguf/gguf.h"
#include "model/generate.h"
#include "serve/anthropic_api.h"
#include "serve/engine.h"
#include "serve/openai_api.h"
#include "vision/multimodal.h"
#include "vision/vision_testing.h"

namespace hart::serve {
namespace {

using nlohmann::json;
using Body = nlohmann::ordered_json;

std::string image_refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400);
    return e.what();
  }
  return "(accepted)";
}

TEST(ImageUrl, ReadsDataUrlsAndBareBase64) {
  const std::string png = "\x89PNG\r\n";
  const std::string b64 = base64_encode(png.data(), png.size());
  for (const std::string& url : {"data:image/png;base64," + b64, b64}) {
    const ImageBytes b = image_url_bytes(url, "part", "messages");
    EXPECT_EQ(std::string(b.begin(), b.end()), png) << url;
  }
}

TEST(ImageUrl, RefusesWhatTheServerDoesNotFetchOrRead) {
  const auto why = [](const std::string& url) { return image_refusal([&] { image_url_bytes(url, "part", "messages"); }); };
  EXPECT_NE(why("https://example.com/cat.png").find("remote image URLs are not fetched"), std::string::npos);
  EXPECT_NE(why("http://example.com/cat.png").find("data: URL"), std::string::npos);
  EXPECT_NE(why("file:///etc/passwd").find("file://"), std::string::npos);
  EXPECT_NE(why("data:text/plain;base64,aGk=").find("not an image's"), std::string::npos);
  EXPECT_NE(why("data:image/png,rawbytes").find("must be base64"), std::string::npos);
  EXPECT_NE(why("not base64 at all!").find("not valid base64"), std::string::npos);
}

TEST(ContentKeys, AreNegativeAndDependOnEveryPixel) {
  vision::RgbImage a{2, 1, {1, 2, 3, 4, 5, 6}}, b = a;
  b.rgb[5] = 7;
  const auto ka = content_keys(a, 8), kb = content_keys(b, 8);
  for (size_t i = 0; i < ka.size(); i++) {
    EXPECT_LT(ka[i], 0);
    EXPECT_NE(ka[i], kb[i]) << i;
  }
  EXPECT_EQ(ka, content_keys(a, 8));
  EXPECT_NE(ka[0], ka[1]);
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::string data_url(const std::string& bytes) { return "data:image/png;base64," + base64_encode(bytes.data(), bytes.size()); }

// The vision fixtures (the tiny Idefics3 projector beside stories260K), served.
struct VisionServe : ::testing::Test {
  vision::testing::TempDir dir;
  std::unique_ptr<Model> model;
  std::unique_ptr<Tokenizer> tok;
  std::unique_ptr<vision::ClipModel> clip;
  std::unique_ptr<ImageEncoder> images;
  const ChatFormatter chatml{ChatTemplate::CHATML};
  std::string png, png2;  // two images of the same size and layout, different pixels

  void SetUp() override {
    HART_REQUIRE_TESTDATA(base, "models/stories260K.gguf");
    vision::fixtures::write_text_model(base, dir.file("text.gguf"));
    vision::fixtures::write_mmproj(dir.file("mmproj.gguf"));
    vision::fixtures::write_png(dir.file("a.png"));
    vision::fixtures::write_png(dir.file("b.png"), 40, 28);
    png = file_bytes(dir.file("a.png"));
    png2 = file_bytes(dir.file("b.png"));
    model = Model::from_file(gguf::File::open(dir.file("text.gguf"), gguf::LoadMode::Memory));
    tok = Tokenizer::from_gguf(*model->file);
    clip = vision::ClipModel::open(dir.file("mmproj.gguf"));
    vision::check_pair(*clip, *model);
    images = std::make_unique<ImageEncoder>(*clip, BackendSet({"cpu"}, 2, ""));
  }
  PromptContext context(bool with_vision) { return {*tok, chatml, 256, nullptr, 256, with_vision ? images.get() : nullptr}; }
  static Body chat(const std::string& image, const std::string& text) {
    return {{"messages", {{{"role", "user"},
                           {"content", {{{"type", "image_url"}, {"image_url", {{"url", data_url(image)}}}},
                                        {{"type", "text"}, {"text", text}}}}}}},
            {"temperature", 0}, {"max_tokens", 12}};
  }
  // `hart run -p PROMPT --image`: the image's embeddings decoded at the marker, then generate().
  std::vector<int32_t> alone(const std::string& prompt, const std::string& image_file, int max_tokens) {
    vision::Encoder encoder(*clip, BackendSet({"cpu"}, 1, ""));
    const auto p = vision::encode_prompt(*clip, encoder, *tok, prompt, {vision::load_image(image_file)}, true);
    SessionParams sp;
    sp.n_ctx = 256;
    Session session(*model, sp, BackendSet({"cpu"}, 1, ""));
    const std::vector<int32_t> last = vision::decode_all_but_last(session, p);
    SamplerParams greedy;
    greedy.temperature = 0;
    Sampler sampler(greedy, model->hp.n_vocab);
    std::vector<int32_t> out;
    GenerateOptions go;
    go.n_predict = max_tokens;
    go.is_eog = [&](int32_t t) { return tok->is_eog(t); };
    go.on_token = [&](int32_t t) { return out.push_back(t), true; };
    generate(session, sampler, last, go);
    return out;
  }
};

struct ImageRun {
  std::vector<int32_t> tokens;
  Event done;
};

ImageRun run_image(Engine& engine, GenParams p) {
  const auto s = engine.submit(std::move(p));
  ImageRun r;
  for (Event ev = s->pop();; ev = s->pop()) {
    for (const TokenInfo& t : ev.tokens) r.tokens.push_back(t.id);
    if (ev.done) return r.done = ev, r;
  }
}

TEST_F(VisionServe, ChatImageSplicedAsHartRunDoesAndCachedByContent) {
  const Body a = chat(png, "What is it?"), b = chat(png2, "What is it?");
  const ApiRequest ra = parse_request(a, Endpoint::CHAT, context(true));
  const ApiRequest rb = parse_request(b, Endpoint::CHAT, context(true));
  ASSERT_TRUE(ra.gen.images);
  // 2 x 2 slices and the overview, 4 embeddings each, each tile a run between its marker tokens.
  ASSERT_EQ(ra.gen.images->size(), 5u);
  const int image_begin = ra.gen.images->front().begin;
  const int image_end = ra.gen.images->back().begin + int(ra.gen.images->back().embd.size()) / model->hp.n_embd;
  for (const PromptEmbeddings& tile : *ra.gen.images) EXPECT_EQ(tile.embd.size(), size_t(4 * model->hp.n_embd));
  ASSERT_EQ(rb.gen.prompt.size(), ra.gen.prompt.size());  // the same layout, other pixels
  EXPECT_EQ(std::vector<int32_t>(ra.gen.prompt.begin(), ra.gen.prompt.begin() + image_begin),
            std::vector<int32_t>(rb.gen.prompt.begin(), rb.gen.prompt.begin() + image_begin));

  // The prompt text as the chat template renders it, with its marker: what hart run is given.
  const std::string text = chat_prompt_text(a, chatml);
  ASSERT_NE(text.find(vision::kMediaMarker), std::string::npos);
  const std::vector<int32_t> want_a = alone(text, dir.file("a.png"), 12);
  const std::vector<int32_t> want_b = alone(text, dir.file("b.png"), 12);
  ASSERT_FALSE(want_a.empty());

  // Chunks of 7: prompt chunks stop inside the image and at both of its ends.
  Metrics metrics;
  EngineOptions opt;
  opt.n_ctx = 256;
  opt.chunk_size = 7;
  Engine engine(*model, *tok, opt, BackendSet({"cpu"}, 2, ""), metrics);
  const ImageRun first = run_image(engine, ra.gen);
  EXPECT_EQ(first.tokens, want_a);
  EXPECT_EQ(first.done.cached_tokens, 0);
  // Another image after the same text: the cache holds nothing of it.
  const ImageRun other = run_image(engine, rb.gen);
  EXPECT_EQ(other.tokens, want_b);
  EXPECT_LE(other.done.cached_tokens, image_begin);
  EXPECT_GT(other.done.cached_tokens, 0);  // the text before it is shared
  // The first image again: reused past its end.
  const ImageRun again = run_image(engine, ra.gen);
  EXPECT_EQ(again.tokens, want_a);
  EXPECT_GT(again.done.cached_tokens, image_end);
  EXPECT_EQ(again.done.cached_tokens, int(ra.gen.prompt.size()) - 1);
}

TEST_F(VisionServe, AnthropicAndResponsesImagesAreTheChatOnes) {
  const std::string b64 = base64_encode(png.data(), png.size());
  const Body anthropic = {
      {"model", "m"}, {"max_tokens", 12},
      {"messages", {{{"role", "user"}, {"content", {{{"type", "image"}, {"source", {{"type", "base64"}, {"media_type", "image/png"}, {"data", b64}}}},
                                                     {{"type", "text"}, {"text", "What is it?"}}}}}}}};
  const ApiRequest ra = parse_anthropic_request(anthropic, context(true));
  const ApiRequest rc = parse_request(chat(png, "What is it?"), Endpoint::CHAT, context(true));
  EXPECT_EQ(ra.gen.prompt, rc.gen.prompt);
  ASSERT_TRUE(ra.gen.images);
  EXPECT_EQ(ra.gen.images->front().embd, rc.gen.images->front().embd);
  EXPECT_EQ(count_anthropic_tokens(anthropic, context(true)), int(rc.gen.prompt.size()));
  Body by_url = anthropic;
  by_url["messages"][0]["content"][0]["source"] = {{"type", "url"}, {"url", "https://example.com/a.png"}};
  EXPECT_NE(image_refusal([&] { parse_anthropic_request(by_url, context(true)); }).find("not fetched"), std::string::npos);
}

TEST_F(VisionServe, RefusesBadImagesAndImagesWithoutAProjector) {
  const auto why = [&](const Body& body, bool vision) {
    return image_refusal([&] { parse_request(body, Endpoint::CHAT, context(vision)); });
  };
  EXPECT_NE(why(chat(png, "Hi"), false).find("--mmproj"), std::string::npos);
  EXPECT_NE(why(chat("GIF89a not really", "Hi"), true).find("image 1 of the request"), std::string::npos);
  std::string truncated = png.substr(0, png.size() / 2);
  EXPECT_NE(why(chat(truncated, "Hi"), true).find("image 1 of the request"), std::string::npos);
  // One image and a marker the client typed too: the markers are not one per image.
  EXPECT_NE(why(chat(png, std::string("and ") + std::string(vision::kMediaMarker)), true).find("marker"), std::string::npos);
  Body spec = chat(png, "Hi");
  spec["speculative.type"] = "ngram-simple";
  EXPECT_EQ(why(spec, true).find("(accepted)"), std::string::npos);
}

}  // namespace
}  // namespace hart::serve
