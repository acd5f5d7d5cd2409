// `hart run --mmproj F --image PATH`: llama.cpp's greedy tokens after a prompt showing the image
// twice (tests/golden/vision), and each kind of bad input refused with its reason.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "common/testdata.h"
#include "run_command.h"
#include "vision/fixtures.h"
#include "vision/vision_testing.h"

namespace {

using hart::testing::Result;

Result run(const std::string& args, const char* redirect) {
  return hart::testing::run_command(std::string(HART_BINARY) + " " + args + redirect);
}

// The vision fixtures in dir: text.gguf (base with the image tokens), mmproj.gguf, image.png.
void write_fixtures(const std::string& base, const hart::vision::testing::TempDir& dir) {
  namespace fx = hart::vision::fixtures;
  fx::write_text_model(base, dir.file("text.gguf"));
  fx::write_mmproj(dir.file("mmproj.gguf"));
  fx::write_png(dir.file("image.png"));
}

TEST(VisionCli, RunGivesLlamaCppsTokensAndRefusesBadInput) {
  HART_REQUIRE_TESTDATA(base, "models/stories260K.gguf");
  HART_REQUIRE_TESTDATA(other, "models/TinyStories-656K-Q8_0.gguf");
  hart::vision::testing::TempDir dir;
  write_fixtures(base, dir);
  std::ifstream in(std::string(HART_REPO_GOLDEN) + "/vision/idefics3-tiny.json");
  const nlohmann::json g = nlohmann::json::parse(in);
  const std::string model = "-m " + dir.file("text.gguf") + " --cache-type f32 -n 8 --temp 0 ";
  const std::string vision = "--mmproj " + dir.file("mmproj.gguf") + " --image " + dir.file("image.png");
  const Result r = run("run " + model + vision + " --image " + dir.file("image.png") + " -p '" +
                           g["prompt"].get<std::string>() + "' --json",
                       " 2>/dev/null");
  ASSERT_EQ(r.status, 0);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["generated_tokens"], g["generated_tokens"]);
  EXPECT_EQ(j["n_image_tokens"], 2 * 5 * 4);  // two images of 5 tiles, 4 embeddings each

  // hart info checks a projector as hart loads it.
  const auto info = nlohmann::json::parse(run("info --json --no-tensors " + dir.file("mmproj.gguf"), " 2>/dev/null").out);
  EXPECT_EQ(info["check"]["architecture"], "clip");
  EXPECT_EQ(info["check"]["loadable"], true);
  EXPECT_EQ(info["check"]["tensors_used"], 38);

  // No marker in the prompt: the image goes before it, as llama-mtmd-cli puts it.
  EXPECT_EQ(run("run " + model + vision + " -p 'Answer:'", " 2>/dev/null").status, 0);

  std::ofstream(dir.file("corrupt.png")) << "\x89PNG\r\n\x1a\n not really";
  const auto refused = [&](const std::string& args, const std::string& says) {
    const Result e = run("run " + args, " 2>&1 >/dev/null");
    EXPECT_NE(e.status, 0) << args;
    EXPECT_NE(e.out.find(says), std::string::npos) << args << ": " << e.out;
  };
  refused(model + "--image " + dir.file("image.png"), "--image needs --mmproj");
  refused(model + "--mmproj " + dir.file("mmproj.gguf") + " --image " + dir.file("corrupt.png"), "corrupt.png: image:");
  refused(model + "--mmproj " + dir.file("text.gguf") + " --image " + dir.file("image.png"), "not a multimodal projector");
  refused("-m " + other + " " + vision, "the projector is for another model");
  refused("-m " + base + " " + vision, "has no token");
  refused(model + vision + " -p '<__media__><__media__>'", "more <__media__> markers than the 1 images");
  refused(model + vision + " --spec-type ngram-simple", "speculative decoding does not take images");
  refused(model + vision + " --context-shift", "--context-shift does not take images");
}

// Single quotes for sh around any text.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// `hart chat --mmproj`: /image PATH attaches an image to the next message; each turn answers as
// `hart run --image` on the prompt the template renders (the second turn on the whole
// conversation, the image in its first message, from the session's cached prefix).
TEST(VisionCli, ChatImageCommand) {
  HART_REQUIRE_TESTDATA(base, "models/stories260K.gguf");
  hart::vision::testing::TempDir dir;
  write_fixtures(base, dir);
  const std::string model = "-m " + dir.file("text.gguf") + " --cache-type f32 -n 8 --temp 0 ";
  const std::string mmproj = "--mmproj " + dir.file("mmproj.gguf") + " ";
  const auto chat = [&](const std::string& flags, const std::string& input, const char* redirect = " 2>/dev/null") {
    std::ofstream(dir.file("input.txt")) << input;
    return run("chat " + model + "--chat-template chatml " + flags + " < " + dir.file("input.txt"), redirect);
  };
  const auto answer = [&](const std::string& prompt) {  // hart run's text, without its last newline
    const Result r = run("run " + model + mmproj + "--image " + dir.file("image.png") + " -p " + quoted(prompt), " 2>/dev/null");
    EXPECT_EQ(r.status, 0);
    return r.out.substr(0, r.out.size() - 1);
  };
  const std::string turn1 = "<|im_start|>user\n<__media__>What is it?<|im_end|>\n<|im_start|>assistant\n";
  const std::string reply1 = answer(turn1);
  const std::string reply2 =
      answer(turn1 + reply1 + "<|im_end|>\n<|im_start|>user\nAnd then?<|im_end|>\n<|im_start|>assistant\n");
  const Result two = chat(mmproj, "/image " + dir.file("image.png") + "\nWhat is it?\nAnd then?\n");
  ASSERT_EQ(two.status, 0);
  EXPECT_EQ(two.out, reply1 + "\n" + reply2 + "\n");
  // After /reset, the image is gone: the same question is a text-only turn.
  const Result reset = chat(mmproj, "/image " + dir.file("image.png") + "\nWhat is it?\n/reset\nWhat is it?\n");
  const Result plain = chat("", "What is it?\n");
  EXPECT_EQ(reset.out, reply1 + "\n" + plain.out);

  // Refused, the chat going on: /image without --mmproj, an unreadable image, no path, speculation.
  const auto says = [&](const std::string& flags, const std::string& input, const std::string& what) {
    const Result r = chat(flags, input + "What is it?\n", " 2>&1");
    EXPECT_EQ(r.status, 0) << input;
    EXPECT_NE(r.out.find(what), std::string::npos) << input << ": " << r.out;
    EXPECT_NE(r.out.find(plain.out), std::string::npos) << input << ": the next message is answered as text: " << r.out;
  };
  says("", "/image " + dir.file("image.png") + "\n", "hart: /image needs --mmproj");
  std::ofstream(dir.file("corrupt.png")) << "\x89PNG\r\n\x1a\n not really";
  says(mmproj, "/image " + dir.file("corrupt.png") + "\n", "corrupt.png: image:");
  says(mmproj, "/image " + dir.file("missing.png") + "\n", "missing.png");
  says(mmproj, "/image\n", "/image PATH: which image?");
  says(mmproj + "--spec-type ngram-simple", "/image " + dir.file("image.png") + "\n", "speculative decoding does not take images");
  // A projector for another model is refused at the start.
  HART_REQUIRE_TESTDATA(other, "models/TinyStories-656K-Q8_0.gguf");
  const Result wrong = run("chat -m " + other + " --chat-template chatml " + mmproj + "< /dev/null", " 2>&1");
  EXPECT_NE(wrong.status, 0);
  EXPECT_NE(wrong.out.find("the projector is for another model"), std::string::npos) << wrong.out;
}

// On the ET device (emulated), encoder and text model share it: the encoder's hold on it ends
// before the session opens it (the device's lock file in the test's own folder). 10 s here; the
// RISC-V pass leaves it to the host (scripts/riscv-test).
TEST(VisionCli, EncoderAndTextModelShareTheEtDevice) {
  HART_REQUIRE_TESTDATA(base, "models/stories260K.gguf");
  if (run("run --list-devices", " 2>/dev/null").out.find("et0") == std::string::npos) GTEST_SKIP() << "no ET device";
  hart::vision::testing::TempDir dir;
  write_fixtures(base, dir);
  const Result et = hart::testing::run_command(
      "XDG_RUNTIME_DIR=" + dir.path.string() + " " + HART_BINARY + " run -m " + dir.file("text.gguf") +
      " -n 2 --temp 0 --mmproj " + dir.file("mmproj.gguf") + " --image " + dir.file("image.png") +
      " --json --device et,cpu 2>/dev/null");
  ASSERT_EQ(et.status, 0);
  EXPECT_EQ(nlohmann::json::parse(et.out)["n_image_tokens"], 5 * 4);
}

}  // namespace
