#include "tokenizer/tokenizer.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "common/error.h"
#include "common/testdata.h"
#include "gguf/gguf.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/test_vectors.h"

namespace hart {
namespace {

namespace fs = std::filesystem;

// The conformance vocabularies of testdata/tokenizer and testdata/archs/tokenizer (some of them
// gzip-compressed): DIR/ggml-vocab-NAME.gguf with NAME.gguf.inp / .out beside it.
struct VocabFile {
  const char* dir;
  const char* name;
  friend void PrintTo(const VocabFile& v, std::ostream* os) { *os << v.dir << "/" << v.name; }
};
const VocabFile kVocabs[] = {
    {"tokenizer", "llama-spm"}, {"tokenizer", "phi-3"},        {"tokenizer", "llama-bpe"},
    {"tokenizer", "qwen2"},     {"tokenizer", "gpt-2"},        {"tokenizer", "deepseek-llm"},
    {"tokenizer", "falcon"},    {"tokenizer", "refact"},       {"tokenizer", "starcoder"},
    {"tokenizer", "bert-bge"},  {"archs/tokenizer", "qwen35"}, {"archs/tokenizer", "gemma-4"}};

std::string vocab_path(const std::string& dir, const std::string& name) {
  return dir + "/ggml-vocab-" + name + ".gguf";
}

std::vector<uint8_t> gunzip(const std::string& path) {
  gzFile gz = gzopen(path.c_str(), "rb");
  if (!gz) throw Error(path + ": cannot open");
  std::vector<uint8_t> out;
  uint8_t buf[1 << 16];
  int n;
  while ((n = gzread(gz, buf, sizeof buf)) > 0) out.insert(out.end(), buf, buf + n);
  const bool ok = n == 0;
  gzclose(gz);
  if (!ok) throw Error(path + ": corrupt gzip data");
  return out;
}

// The ids of each line of an .out file. (Those of tokenizer/ put a space before every id, those
// of archs/tokenizer only between ids.)
std::vector<std::vector<int32_t>> read_id_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::vector<int32_t>> lines;
  for (std::string line; std::getline(in, line);) {
    std::istringstream ids(line);
    lines.emplace_back(std::istream_iterator<int32_t>(ids), std::istream_iterator<int32_t>());
  }
  return lines;
}

// Loads the tokenizer of a GGUF file (or of PATH.gz, decompressed in memory) once per test
// binary: the large vocabularies take a while.
const Tokenizer& cached_tokenizer(const std::string& path) {
  static std::map<std::string, std::unique_ptr<Tokenizer>> cache;
  auto& t = cache[path];
  if (!t) {
    const auto file = fs::exists(path) ? gguf::File::open(path)
                                       : gguf::File::from_bytes(gunzip(path + ".gz"), path);
    t = Tokenizer::from_gguf(*file);
  }
  return *t;
}

#ifndef HART_TOKENIZER_WORDPIECE
#define HART_TOKENIZER_WORDPIECE 0
#endif

// Skips the test when this build cannot load `name` (WordPiece needs ICU).
#define REQUIRE_VOCAB_SUPPORT(name)                                        \
  if (std::string(name) == "bert-bge" && !HART_TOKENIZER_WORDPIECE) \
  GTEST_SKIP() << "this build has no WordPiece (ICU) support"

const Tokenizer& vocab_tokenizer(const std::string& name, const std::string& dir = "tokenizer") {
  return cached_tokenizer(testdata_path(vocab_path(dir, name)));
}

class VocabVectors : public ::testing::TestWithParam<VocabFile> {};

// Every test string gives llama.cpp's ids (no BOS/EOS, specials not parsed).
TEST_P(VocabVectors, MatchLlamaCpp) {
  const auto [dir, name] = GetParam();
  HART_REQUIRE_TESTDATA(inp, vocab_path(dir, name) + ".inp");
  REQUIRE_VOCAB_SUPPORT(name);
  const Tokenizer& tok = vocab_tokenizer(name, dir);
  const auto strings = tok::read_test_strings(inp);
  const auto expected = read_id_lines(testdata_path(vocab_path(dir, name) + ".out"));
  ASSERT_EQ(strings.size(), expected.size());
  ASSERT_GT(strings.size(), 40u);
  for (size_t i = 0; i < strings.size(); ++i)
    EXPECT_EQ(tok.encode(strings[i], false, false), expected[i])
        << "string " << i << ": '" << strings[i] << "'";
}

// Decoding gives the input back, byte for byte (WordPiece lowercases, so it cannot).
TEST_P(VocabVectors, DecodeRoundTrips) {
  const auto [dir, name] = GetParam();
  HART_REQUIRE_TESTDATA(inp, vocab_path(dir, name) + ".inp");
  REQUIRE_VOCAB_SUPPORT(name);
  const Tokenizer& tok = vocab_tokenizer(name, dir);
  if (tok.kind() == Tokenizer::Kind::Wpm) GTEST_SKIP() << "WordPiece normalizes its input";
  for (const std::string& s : tok::read_test_strings(inp))
    EXPECT_EQ(tok.decode(tok.encode(s, false, false)), s);
}

INSTANTIATE_TEST_SUITE_P(Tokenizer, VocabVectors, ::testing::ValuesIn(kVocabs),
                         [](const auto& info) {
                           std::string n = info.param.name;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

// No vocabulary of test data folder `dir` (at `path`) is left out of kVocabs.
void expect_every_vocab_listed(const std::string& dir, const std::string& path) {
  std::set<std::string> listed;
  for (const VocabFile& v : kVocabs)
    if (v.dir == dir) listed.insert(v.name);
  for (const auto& e : fs::directory_iterator(path)) {
    std::string f = e.path().filename().string();
    if (!f.starts_with("ggml-vocab-") || f.ends_with(".inp") || f.ends_with(".out")) continue;
    f = f.substr(11, f.find(".gguf") - 11);
    EXPECT_TRUE(listed.count(f)) << dir << ": " << f;
  }
}

TEST(Tokenizer, EveryVocabFileIsTested) {
  HART_REQUIRE_TESTDATA(path, "tokenizer");
  expect_every_vocab_listed("tokenizer", path);
}

TEST(Tokenizer, EveryArchsVocabFileIsTested) {
  HART_REQUIRE_TESTDATA(path, "archs/tokenizer");
  expect_every_vocab_listed("archs/tokenizer", path);
}

// Every golden case in folder `path`: its prompt tokenizes (specials parsed, BOS per
// add_bos) as llama.cpp did with the model's vocabulary in `models_dir`. Returns the cases seen.
int check_golden_prompts(const std::string& path, const std::string& models_dir) {
  int checked = 0;
  for (const auto& e : fs::directory_iterator(path)) {
    if (e.path().extension() != ".json") continue;
    const auto j = nlohmann::json::parse(std::ifstream(e.path()));
    if (!j.contains("prompt_tokens") || !j.contains("prompt")) continue;
    const std::string model = j["model"];
    const Tokenizer& tok = cached_tokenizer(testdata_path(models_dir + "/" + model));
    EXPECT_EQ(tok.add_bos(), j["add_bos"].get<bool>()) << e.path();
    EXPECT_EQ(tok.encode(j["prompt"].get<std::string>(), true, true),
              j["prompt_tokens"].get<std::vector<int32_t>>())
        << e.path();
    ++checked;
  }
  return checked;
}

TEST(Tokenizer, GoldenPrompts) {
  HART_REQUIRE_TESTDATA(path, "golden");
  EXPECT_GT(check_golden_prompts(path, "models"), 20);
}

// The 13 architectures of archs/: the stories260K SentencePiece vocabulary and, for rwkv7 /
// arwkv7, an RWKV World one.
TEST(Tokenizer, ArchsGoldenPrompts) {
  HART_REQUIRE_TESTDATA(path, "archs/golden");
  EXPECT_GT(check_golden_prompts(path, "archs/models"), 80);
}

TEST(Tokenizer, ParsesQwenChatMarkers) {
  HART_REQUIRE_TESTDATA(path, "tokenizer/ggml-vocab-qwen2.gguf.gz");
  const Tokenizer& tok = vocab_tokenizer("qwen2");
  const int32_t im_start = tok.find_token("<|im_start|>").value();
  const int32_t im_end = tok.find_token("<|im_end|>").value();
  const std::string chat = "<|im_start|>user\nHi<|im_end|>\n";

  const auto ids = tok.encode(chat, true, true);
  ASSERT_EQ(ids.size(), 6u);  // no BOS for Qwen
  EXPECT_EQ(ids[0], im_start);
  EXPECT_EQ(ids[4], im_end);
  EXPECT_EQ(tok.decode(ids), "user\nHi\n");
  EXPECT_EQ(tok.decode(ids, true), chat);

  const auto plain = tok.encode(chat, true, false);
  EXPECT_GT(plain.size(), ids.size());
  EXPECT_EQ(std::count(plain.begin(), plain.end(), im_start), 0);
  EXPECT_EQ(tok.decode(plain), chat);

  EXPECT_TRUE(tok.is_eog(im_end));
  EXPECT_TRUE(tok.is_eog(tok.find_token("<|endoftext|>").value()));
  EXPECT_FALSE(tok.is_eog(im_start));
  EXPECT_FALSE(tok.add_bos());
}

TEST(Tokenizer, AddsBosPerVocabulary) {
  HART_REQUIRE_TESTDATA(path, "tokenizer/ggml-vocab-llama-spm.gguf");
  const Tokenizer& spm = vocab_tokenizer("llama-spm");
  ASSERT_TRUE(spm.add_bos());
  EXPECT_EQ(spm.encode("Hello", true, false).front(), spm.bos());
  EXPECT_NE(spm.encode("Hello", false, false).front(), spm.bos());
  EXPECT_EQ(spm.encode("", true, false), std::vector<int32_t>{spm.bos()});
  EXPECT_TRUE(spm.is_eog(spm.eos()));

  const Tokenizer& llama3 = vocab_tokenizer("llama-bpe");
  ASSERT_TRUE(llama3.add_bos());
  EXPECT_EQ(llama3.encode("Hello", true, false).front(), 128000);
  EXPECT_TRUE(llama3.is_eog(llama3.find_token("<|eot_id|>").value()));

}

TEST(Tokenizer, WordPieceAddsClsAndSep) {
  HART_REQUIRE_TESTDATA(path, "tokenizer/ggml-vocab-bert-bge.gguf");
  REQUIRE_VOCAB_SUPPORT("bert-bge");
  const Tokenizer& bert = vocab_tokenizer("bert-bge");
  const auto ids = bert.encode("Héllo, World", true, false);
  ASSERT_EQ(ids.size(), 5u);
  EXPECT_EQ(ids.front(), 101);  // [CLS]
  EXPECT_EQ(ids.back(), 102);   // [SEP]
  EXPECT_EQ(bert.decode(ids), " hello , world");  // lowercased, accent stripped, split at ','
}

TEST(Tokenizer, ByteFallbackDecodesWholeCharacters) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  const Tokenizer* tok = &cached_tokenizer(path);
  const std::string text = "Tim saw a 🦙 and said 你好";
  const auto ids = tok->encode(text, true, false);
  EXPECT_TRUE(std::any_of(ids.begin(), ids.end(), [&](int32_t id) { return tok->token_text(id) == "<0xF0>"; }));
  EXPECT_EQ(tok->decode(ids), " " + text);  // BOS first: llama.cpp keeps the prefix space
  EXPECT_EQ(tok->decode(std::span(ids).subspan(1)), text);
  EXPECT_EQ(tok->token_to_piece(tok->bos()), "");
  EXPECT_EQ(tok->token_to_piece(tok->bos(), true), "<s>");
  EXPECT_THROW(tok->token_to_piece(tok->n_vocab()), Error);
}

// Qwen 3.5 keeps combining marks inside words; Qwen2 cuts a word before each mark.
TEST(Tokenizer, Qwen35WordsKeepCombiningMarks) {
  const std::string text = "Ame\u0301lie \u0928\u092e\u0938\u094d\u0924\u0947";  // Amélie नमस्ते
  using Words = std::vector<std::string_view>;
  EXPECT_EQ(tok::PreTokenizer("qwen35").split(text),
            (Words{"Ame\u0301lie", " \u0928\u092e\u0938\u094d\u0924\u0947"}));
  EXPECT_EQ(tok::PreTokenizer("qwen2").split(text),
            (Words{"Ame", "\u0301lie", " \u0928\u092e\u0938", "\u094d\u0924", "\u0947"}));
}

// The RWKV World vocabulary of the tiny rwkv7 model: id 0 "<s>" (control, BOS = EOS), ids
// 1-256 the single bytes 0x00-0xFF, then pieces such as "Once", " upon", " The end".
const Tokenizer& rwkv_tokenizer() {
  return cached_tokenizer(testdata_path("archs/models/rwkv7-tiny-F32.gguf"));
}

using Ids = std::vector<int32_t>;

TEST(Tokenizer, RwkvLongestMatch) {
  HART_REQUIRE_TESTDATA(path, "archs/models/rwkv7-tiny-F32.gguf");
  const Tokenizer& tok = rwkv_tokenizer();
  ASSERT_EQ(tok.kind(), Tokenizer::Kind::Rwkv);
  EXPECT_FALSE(tok.add_bos());
  EXPECT_EQ(tok.bos(), 0);
  EXPECT_TRUE(tok.is_eog(0));
  const auto id = [&](const std::string& text) { return tok.find_token(text).value(); };
  EXPECT_EQ(tok.encode("Once upon a time", true, true), (Ids{257, 258, 259, 260}));  // the goldens
  EXPECT_EQ(tok.encode("Hello world", true, true), (Ids{266, 268}));
  // The longest token wins, also over shorter ones that would leave a better rest.
  EXPECT_EQ(tok.encode(" The end", false, false), (Ids{id(" The end")}));
  EXPECT_EQ(tok.encode(" The ends", false, false), (Ids{id(" The end"), id("s")}));
  EXPECT_EQ(tok.encode(" The e", false, false), (Ids{id(" The"), id(" e")}));  // not " The end"
  // Tokens stored escaped: \n\n, \xe2\x80\x9c (a left double quote), the backslash.
  EXPECT_EQ(tok.encode("\n\n\u201cHi\\", false, false),
            (Ids{id("\\n\\n"), id("\\xe2\\x80\\x9c"), id("H"), id("i"), id("\\\\")}));
}

// Every byte is a token (id byte + 1), invalid UTF-8 included, and decoding gives the exact
// bytes back.
TEST(Tokenizer, RwkvBytesRoundTrip) {
  HART_REQUIRE_TESTDATA(path, "archs/models/rwkv7-tiny-F32.gguf");
  const Tokenizer& tok = rwkv_tokenizer();
  std::string all;
  for (int b = 0; b < 256; ++b) {
    const std::string byte(1, static_cast<char>(b));
    EXPECT_EQ(tok.encode(byte, false, false), (Ids{b + 1})) << b;
    EXPECT_EQ(tok.token_to_piece(b + 1), byte) << b;
    all += byte;
  }
  EXPECT_EQ(tok.decode(tok.encode(all, false, false)), all);
  const std::string text = "Once upon a time, \xff\xfe Lily said \u201chello\u201d.\n\n";
  EXPECT_EQ(tok.decode(tok.encode(text, true, true)), text);
}

// "<s>" is token 0 with or without parse_special: llama.cpp's trie holds every token, the control
// one included. It renders only on request.
TEST(Tokenizer, RwkvSpecialToken) {
  HART_REQUIRE_TESTDATA(path, "archs/models/rwkv7-tiny-F32.gguf");
  const Tokenizer& tok = rwkv_tokenizer();
  const Ids ids = tok.encode("<s>Hello<s>", true, true);
  EXPECT_EQ(ids, (Ids{0, 266, 0}));
  EXPECT_EQ(tok.encode("<s>Hello<s>", true, false), ids);
  EXPECT_EQ(tok.decode(ids), "Hello");
  EXPECT_EQ(tok.decode(ids, true), "<s>Hello<s>");
  EXPECT_EQ(tok.token_to_piece(0), "");
  EXPECT_EQ(tok.token_to_piece(0, true), "<s>");
  EXPECT_EQ(tok.encode("<s", false, true), (Ids{tok.find_token("<").value(), tok.find_token("s").value()}));
}

// A long prompt goes through in one piece (and is not quadratic: this would take minutes).
void expect_long_prompt_round_trips(const Tokenizer& tok, const std::string& line_end) {
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "Once upon a time, number " + std::to_string(i) + " said: héllo!" + line_end;
  const auto ids = tok.encode(text, false, true);
  EXPECT_GT(ids.size(), 20000u);
  EXPECT_EQ(tok.decode(ids), text);
}

TEST(Tokenizer, LongPrompt) {
  HART_REQUIRE_TESTDATA(path, "tokenizer/ggml-vocab-llama-bpe.gguf.gz");
  expect_long_prompt_round_trips(vocab_tokenizer("llama-bpe"), "\n");
}

// Gemma 4 merges over whole lines: one line of 90 KB.
TEST(Tokenizer, Gemma4LongLine) {
  HART_REQUIRE_TESTDATA(path, "archs/tokenizer/ggml-vocab-gemma-4.gguf.gz");
  expect_long_prompt_round_trips(vocab_tokenizer("gemma-4", "archs/tokenizer"), " ");
}

// Through the RWKV trie (a scan of the vocabulary at each byte would crawl).
TEST(Tokenizer, RwkvLongPrompt) {
  HART_REQUIRE_TESTDATA(path, "archs/models/rwkv7-tiny-F32.gguf");
  expect_long_prompt_round_trips(rwkv_tokenizer(), "\n");
}

// Synthetic files: what a broken or vocabulary-less GGUF gives.
std::unique_ptr<gguf::File> synthetic(const std::function<void(gguf::Writer&)>& fill) {
  gguf::Writer w;
  w.set("general.architecture", std::string("llama"));
  fill(w);
  return gguf::File::from_bytes(w.to_bytes());
}

gguf::Value strings(std::vector<std::string> items) {
  auto a = std::make_shared<gguf::Array>();
  a->elem_type = gguf::ValueType::STRING;
  for (auto& s : items) a->items.emplace_back(std::move(s));
  return a;
}

template <class T>
gguf::Value numbers(gguf::ValueType type, std::vector<T> items) {
  auto a = std::make_shared<gguf::Array>();
  a->elem_type = type;
  for (T x : items) a->items.emplace_back(x);
  return a;
}

// A small SentencePiece vocabulary: 0 <unk>, 1 <s>, 2 </s>, 3 ▁, 4 a, 5 b, 6 <tag>
// (user-defined), 7 ▁a (score -1), 8 ab (score `ab_score`).
std::unique_ptr<Tokenizer> tiny_spm(float ab_score, const std::string& name = "tiny") {
  return Tokenizer::from_gguf(*synthetic([&](gguf::Writer& w) {
    w.set("general.name", name);
    w.set("tokenizer.ggml.model", std::string("llama"));
    w.set("tokenizer.ggml.tokens", strings({"<unk>", "<s>", "</s>", "\u2581", "a", "b", "<tag>", "\u2581a", "ab"}));
    w.set("tokenizer.ggml.scores",
          numbers<float>(gguf::ValueType::FLOAT32, {0, 0, 0, -5, -5, -5, 0, -1, ab_score}));
    w.set("tokenizer.ggml.token_type", numbers<int32_t>(gguf::ValueType::INT32, {2, 3, 3, 1, 1, 1, 4, 1, 1}));
  }));
}

// FIM tokens: the metadata's ids first, else llama.cpp's texts (here CodeLlama's "▁<PRE>" form);
// a text-found one becomes a control token, and pad / rep / sep end generation.
TEST(Tokenizer, FimTokensFromMetadataOrText) {
  const auto tok = Tokenizer::from_gguf(*synthetic([&](gguf::Writer& w) {
    w.set("tokenizer.ggml.model", std::string("llama"));
    w.set("tokenizer.ggml.tokens", strings({"<unk>", "<s>", "</s>", "\u2581<PRE>", "<SUF>", "<MID>", "<EOT>", "x", "<reponame>"}));
    w.set("tokenizer.ggml.token_type", numbers<int32_t>(gguf::ValueType::INT32, {2, 3, 3, 1, 1, 1, 1, 1, 1}));
    w.set("tokenizer.ggml.fim_mid_token_id", uint32_t(7));  // the metadata wins over the text
    w.set("tokenizer.ggml.fim_sep_token_id", uint32_t(6));
  }));
  const Tokenizer::Fim f = tok->fim();
  EXPECT_EQ(f.pre, 3);
  EXPECT_EQ(f.suf, 4);
  EXPECT_EQ(f.mid, 7);
  EXPECT_EQ(f.pad, -1);
  EXPECT_EQ(f.rep, 8);
  EXPECT_EQ(f.sep, 6);
  EXPECT_TRUE(tok->is_control(3));
  EXPECT_TRUE(tok->is_eog(8));
  EXPECT_FALSE(tok->is_eog(3));
  EXPECT_EQ(tiny_spm(-2)->fim().pre, -1);
}

// StarCoder's names them <fim_prefix>...; its <file_sep> is not a text llama.cpp reads as FIM_SEP.
TEST(Tokenizer, FimTokensOfRealVocabularies) {
  HART_REQUIRE_TESTDATA(path, "tokenizer/ggml-vocab-starcoder.gguf");
  const Tokenizer& star = vocab_tokenizer("starcoder");
  const Tokenizer::Fim f = star.fim();
  EXPECT_EQ(star.token_text(f.pre), "<fim_prefix>");
  EXPECT_EQ(star.token_text(f.suf), "<fim_suffix>");
  EXPECT_EQ(star.token_text(f.mid), "<fim_middle>");
  EXPECT_EQ(star.token_text(f.pad), "<fim_pad>");
  EXPECT_TRUE(star.is_eog(f.pad));
  EXPECT_EQ(f.rep, -1);
  EXPECT_EQ(f.sep, -1);
  EXPECT_EQ(vocab_tokenizer("llama-spm").fim().pre, -1);
}

TEST(Tokenizer, SpmMergesHighestScoreFirst) {
  EXPECT_EQ(tiny_spm(-2)->encode("ab", false, false), (Ids{7, 5}));    // ▁a beats ab
  EXPECT_EQ(tiny_spm(-0.5)->encode("ab", false, false), (Ids{3, 8}));  // ab beats ▁a
  EXPECT_EQ(tiny_spm(-1)->encode("ab", false, false), (Ids{7, 5}));    // a tie: leftmost pair
}

TEST(Tokenizer, SpecialTokensInText) {
  const auto tok = tiny_spm(-2);
  // User-defined tokens are always matched, and the text after them gets the space prefix.
  EXPECT_EQ(tok->encode("a<tag>b", false, false), (Ids{7, 6, 3, 5}));
  // Control tokens only with parse_special; otherwise "<", "s", ">" have no token: <unk>.
  EXPECT_EQ(tok->encode("a<s>b", false, false), (Ids{7, 0, 0, 0, 5}));
  EXPECT_EQ(tok->encode("a<s>b", false, true), (Ids{7, 1, 3, 5}));
  EXPECT_EQ(tok->encode("<tag> b", false, false), (Ids{6, 3, 3, 5}));
  // Phi-3 vocabularies swallow the whitespace after their special tokens.
  EXPECT_EQ(tiny_spm(-2, "Phi3-mini")->encode("<tag> b", false, false), (Ids{6, 3, 5}));
}

void expect_error(const gguf::File& file, const std::string& fragment) {
  try {
    Tokenizer::from_gguf(file);
    ADD_FAILURE() << "no error, expected one about " << fragment;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(Tokenizer, RejectsBadVocabularies) {
  expect_error(*synthetic([](gguf::Writer&) {}), "no vocabulary");
  expect_error(*synthetic([](gguf::Writer& w) { w.set("tokenizer.ggml.model", std::string("none")); }),
               "no vocabulary");
  const auto spm = [](gguf::Writer& w) {
    w.set("tokenizer.ggml.model", std::string("llama"));
    w.set("tokenizer.ggml.tokens", strings({"<unk>", "<s>", "</s>", "a"}));
  };
  EXPECT_NO_THROW(Tokenizer::from_gguf(*synthetic(spm)));
  expect_error(*synthetic([&](gguf::Writer& w) {
    spm(w);
    w.set("tokenizer.ggml.bos_token_id", uint32_t{7});
  }), "bos_token_id = 7 is out of range");
  expect_error(*synthetic([&](gguf::Writer& w) {
    spm(w);
    w.set("tokenizer.ggml.tokens", strings({"<unk>", "a", "a"}));
  }), "duplicate token 'a'");
  expect_error(*synthetic([&](gguf::Writer& w) {
    w.set("tokenizer.ggml.model", std::string("gpt2"));
    w.set("tokenizer.ggml.pre", std::string("no-such-pre"));
    w.set("tokenizer.ggml.tokens", strings({"a", "b", "ab"}));
    w.set("tokenizer.ggml.merges", strings({"a b"}));
  }), "no-such-pre");
  expect_error(*synthetic([&](gguf::Writer& w) {
    w.set("tokenizer.ggml.model", std::string("wordsoup"));
    w.set("tokenizer.ggml.tokens", strings({"a"}));
  }), "wordsoup");
}

// A tiny hand-made BPE vocabulary: merges apply by rank, not by position.
TEST(Tokenizer, BpeMergesByRank) {
  const auto file = synthetic([](gguf::Writer& w) {
    w.set("tokenizer.ggml.model", std::string("gpt2"));
    w.set("tokenizer.ggml.pre", std::string("gpt-2"));
    w.set("tokenizer.ggml.tokens", strings({"a", "b", "c", "bc", "abc", "ab"}));
    w.set("tokenizer.ggml.merges", strings({"b c", "a bc", "a b"}));
  });
  const auto tok = Tokenizer::from_gguf(*file);
  EXPECT_EQ(tok->encode("abc", false, false), (std::vector<int32_t>{4}));  // b+c first, then a+bc
  EXPECT_EQ(tok->encode("ab", false, false), (std::vector<int32_t>{5}));
  EXPECT_EQ(tok->encode("cab", false, false), (std::vector<int32_t>{2, 5}));
}

// A hand-made Gemma 4 vocabulary: 0 <pad>, 1 <eos>, 2 <bos>, 3 \n, 4 \n\n\n, 5 ▁, 6 a, 7 ▁a,
// 8 <0x63> (the byte "c"); one merge "▁ a".
TEST(Tokenizer, Gemma4SentencePieceStyleBpe) {
  const auto file = synthetic([](gguf::Writer& w) {
    w.set("tokenizer.ggml.model", std::string("gemma4"));
    w.set("tokenizer.ggml.pre", std::string("llama-bpe"));  // ignored for this model
    w.set("tokenizer.ggml.tokens",
          strings({"<pad>", "<eos>", "<bos>", "\n", "\n\n\n", "\u2581", "a", "\u2581a", "<0x63>"}));
    w.set("tokenizer.ggml.token_type", numbers<int32_t>(gguf::ValueType::INT32, {3, 3, 3, 1, 1, 1, 1, 1, 6}));
    w.set("tokenizer.ggml.merges", strings({"\u2581 a"}));
    w.set("tokenizer.ggml.bos_token_id", uint32_t{2});
    w.set("tokenizer.ggml.add_bos_token", false);  // overridden, as llama.cpp does
  });
  const auto tok = Tokenizer::from_gguf(*file);
  EXPECT_TRUE(tok->add_bos());
  EXPECT_EQ(tok->encode(" a a", true, false), (Ids{2, 7, 7}));  // spaces as ▁, merged in raw UTF-8
  EXPECT_EQ(tok->encode("a\n\n\n", false, false), (Ids{6, 4}));  // a newline run whole, no merge needed
  EXPECT_EQ(tok->encode("acz", false, false), (Ids{6, 8}));  // bytes as <0xNN>, dropped without one
  EXPECT_EQ(tok->decode(Ids{2, 7, 8, 4}), " ac\n\n\n");
}

// A hand-made RWKV vocabulary (every token NORMAL, no BOS).
std::unique_ptr<gguf::File> rwkv_file(std::vector<std::string> tokens) {
  return synthetic([&](gguf::Writer& w) {
    w.set("tokenizer.ggml.model", std::string("rwkv"));
    w.set("tokenizer.ggml.tokens", strings(std::move(tokens)));
  });
}

TEST(Tokenizer, RwkvUnescapesAndMatchesLongest) {
  const auto tok = Tokenizer::from_gguf(
      *rwkv_file({"<s>", "a", "b", "c", "ab", "abcd", "\\n", "\\\\", "\\'", "\\xe2\\x96\\x81", "\\t\\r"}));
  EXPECT_EQ(tok->encode("abcd", true, false), (Ids{5}));
  // "abc" walks towards "abcd", then falls back to the longest token on the way.
  EXPECT_EQ(tok->encode("abcab", false, false), (Ids{4, 3, 4}));
  EXPECT_EQ(tok->encode("\n\\'\u2581\t\r", false, false), (Ids{6, 7, 8, 9, 10}));
  EXPECT_EQ(tok->decode(Ids{9, 7, 10}), "\u2581\\\t\r");
  // No token for "z" and no <unk>: an error, not a made-up id.
  EXPECT_THROW(tok->encode("z", false, false), Error);
}

TEST(Tokenizer, RejectsBrokenRwkvEscapes) {
  for (const char* text : {"ab\\", "\\x4", "\\xZZ", "\\x4g", "\\xAB"})
    expect_error(*rwkv_file({"a", text}), "broken escape in RWKV token text");
}

}  // namespace
}  // namespace hart
