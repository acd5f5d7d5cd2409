// Writes the fuzzers' seed corpora into OUT/<target>/, derived from the shared test data, small
// enough for libFuzzer's input sizes:
//   gguf/      every test model and vocabulary, with arrays cut to 16 items and tensors shrunk
//              to one block (same keys, types and tensor names, real structure)
//   vocab/     vocabulary files (and the RWKV World vocabulary of the rwkv7 tiny model) cut to
//              their first few hundred tokens, kept consistent (merges of kept tokens only,
//              special ids inside the vocabulary)
//   tokenize/  the conformance test strings, each after a byte that picks vocabulary and flags
//   chat/      the chat templates stored in the test files and chat_templates/templates/*.jinja
//   request/   OpenAI-style and Anthropic request bodies (a byte picking the endpoint first)
//   grammar/   GBNF grammars and JSON schemas, each with a text to match
//   et_launch/ (empty: the fuzzer starts from nothing)
// Usage: fuzz_seeds OUT
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "fuzz_testdata.h"
#include "gguf/gguf.h"
#include "vision/fixtures.h"
#include "testdata_gguf.h"

using namespace hart;
namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxItems = 16;

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

gguf::Value truncated(const gguf::Value& v, size_t n) {
  const auto* a = std::get_if<std::shared_ptr<gguf::Array>>(&v);
  if (!a || (*a)->items.size() <= n) return v;
  auto out = std::make_shared<gguf::Array>(**a);
  out->items.resize(n);
  return out;
}

// The file's structure at seed size: every key (arrays cut), every tensor as one block of zeros.
std::vector<uint8_t> shrink_model(const gguf::File& f) {
  gguf::Writer w;
  for (const gguf::KeyValue& kv : f.metadata()) {
    if (kv.key != "general.alignment") w.set(kv.key, truncated(kv.value, kMaxItems));
  }
  static const std::vector<uint8_t> zeros(1024);
  for (const gguf::TensorInfo& t : f.tensors()) {
    const TypeInfo& ti = type_info(t.type);
    const int64_t ne[gguf::kMaxDims] = {ti.block_size, 1, 1, 1};
    w.add_tensor(t.name, t.type, std::span<const int64_t>(ne, t.n_dims), zeros.data(), ti.type_size);
  }
  return w.to_bytes();
}

// A consistent vocabulary of the first n tokens: arrays cut, merges whose two parts and result
// are all kept, special token ids beyond n dropped (with add_bos / add_eos then off).
std::vector<uint8_t> shrink_vocab(const gguf::File& f, size_t n) {
  const std::vector<std::string> tokens = f.get_string_array("tokenizer.ggml.tokens").value();
  const std::set<std::string> kept(tokens.begin(), tokens.begin() + std::min(n, tokens.size()));
  const auto inside = [&](const std::string& id_key) { return f.get_int(id_key).value_or(-1) < int64_t(n); };
  gguf::Writer w;
  for (const gguf::KeyValue& kv : f.metadata()) {
    if (!kv.key.starts_with("tokenizer.") && !kv.key.starts_with("general.")) continue;
    if (kv.key == "general.alignment") continue;
    if (kv.key == "tokenizer.ggml.merges") {
      auto merges = std::make_shared<gguf::Array>(gguf::Array{gguf::ValueType::STRING, {}});
      const std::vector<std::string> all = f.get_string_array(kv.key).value();
      for (const std::string& m : all) {
        const size_t space = m.find(' ', 1);
        if (space == std::string::npos) continue;
        const std::string a = m.substr(0, space), b = m.substr(space + 1);
        if (kept.count(a) && kept.count(b) && kept.count(a + b)) merges->items.emplace_back(m);
      }
      w.set(kv.key, merges);
    } else if (kv.key.ends_with("_token_id")) {
      if (inside(kv.key)) w.set(kv.key, kv.value);
    } else if (kv.key == "tokenizer.ggml.add_bos_token" || kv.key == "tokenizer.ggml.add_eos_token") {
      const std::string id_key = kv.key == "tokenizer.ggml.add_bos_token" ? "tokenizer.ggml.bos_token_id"
                                                                         : "tokenizer.ggml.eos_token_id";
      w.set(kv.key, inside(id_key) ? kv.value : gguf::Value(false));
    } else {
      w.set(kv.key, truncated(kv.value, n));
    }
  }
  return w.to_bytes();
}

std::string as_string(const std::vector<uint8_t>& bytes) { return {bytes.begin(), bytes.end()}; }

// The 46 conformance strings of one .inp file.
std::vector<std::string> test_strings(const fs::path& inp) {
  std::ifstream in(inp, std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> out;
  for (size_t at = 0, next; (next = all.find(sep, at)) != std::string::npos; at = next + sep.size()) {
    out.push_back(all.substr(at, next - at));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fuzz_seeds OUT\n";
    return 2;
  }
  const fs::path out = argv[1];
  for (const char* d : {"gguf", "vocab", "tokenize", "chat", "request", "et_launch", "grammar", "image"})
    fs::create_directories(out / d);
  // Images: the vision fixtures' PNG pattern at a few sizes (a wide, a tall and a tiny one).
  for (auto [w, h] : {std::pair{40, 27}, std::pair{9, 31}, std::pair{3, 2}})
    hart::vision::fixtures::write_png((out / "image" / (std::to_string(w) + "x" + std::to_string(h) + ".png")).string(), w, h);
  // And a lossless WebP of 3 x 2 pixels (libwebp's WebPEncodeLosslessRGB), for the WebP path.
  write_file(out / "image" / "3x2.webp",
             std::string("\x52\x49\x46\x46\x44\x00\x00\x00\x57\x45\x42\x50\x56\x50\x38\x4c\x37\x00\x00\x00\x2f\x02\x40"
                         "\x00\x00\x2f\x40\x26\x60\x99\xeb\xb2\x71\xc9\x82\x30\xdb\x38\x35\x96\x7e\x8f\xe5\xd4\xb4\x6d"
                         "\xc0\xa6\xb8\xe4\x0d\x93\x8e\xf9\x8f\x96\x9b\x00\xe0\x3f\x00\x0a\xd9\x46\x80\x43\xf7\xfa\x1c"
                         "\xc3\x45\xf4\x3f\xd6\x13\x00",
                         76));
  // Byte 0: bit 0 = chat endpoint, the rest picks the chat template.
  using namespace std::string_view_literals;  // "..."sv keeps the leading NUL byte
  const std::string_view kRequests[] = {
      "\x01{\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"Hi\"}],"
      "\"max_tokens\":16,\"temperature\":0.7,\"stop\":[\"\\n\"],\"stream\":true,"
      "\"stream_options\":{\"include_usage\":true}}"sv,
      "\x03{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\"}]}],"
      "\"logprobs\":true,\"top_logprobs\":3,\"seed\":42,\"top_k\":40,\"min_p\":0.05}"sv,
      "\x00{\"prompt\":\"Once upon a time\",\"max_tokens\":8,\"logprobs\":2,\"presence_penalty\":0.5}"sv,
      "\x00{\"prompt\":[1,450,4996],\"max_completion_tokens\":4,\"stop\":\".\",\"n\":1}"sv,
      "\x00{\"prompt\":\"hi\",\"max_tokens\":9223372036854775807}"sv,  // once overflowed a bounds check
      // LoRA scales per request (the fuzzer's server has adapters 0 and 1).
      "\x00{\"prompt\":\"hi\",\"lora\":[{\"id\":1,\"scale\":0.5},{\"id\":0,\"scale\":-1}]}"sv,
      "\x82{\"prompt\":\"hi\",\"n_predict\":2,\"lora\":[{\"id\":2,\"scale\":1e39}]}"sv,
      // Fields of the wrong type or range, as the fuzzer found them: a numeric part type (a 500),
      // an integer wider than its field.
      "\x01{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":0,\"text\":\"hi\"}]}]}"sv,
      "\x00{\"prompt\":\"hi\",\"n\":4294967297,\"top_k\":-4294967296}"sv,
      // Tools (0x43: the Jinja template with Hermes tool calls), choices, embeddings (0x80).
      "\x43{\"messages\":[{\"role\":\"user\",\"content\":\"weather?\"},{\"role\":\"assistant\",\"content\":null,"
      "\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"w\",\"arguments\":\"{}\"}}]},"
      "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"<tool_call>{\\\"name\\\": \\\"w\\\", \\\"arguments\\\": {}}</tool_call>\"}],"
      "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"w\",\"parameters\":{\"type\":\"object\"}}}],"
      "\"tool_choice\":\"auto\",\"parallel_tool_calls\":false,\"n\":3,\"seed\":7}"sv,
      "\x43{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"w\"}}],"
      "\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"w\"}}}"sv,
      "\x01{\"messages\":[{\"role\":\"tool\",\"tool_call_id\":\"none\",\"content\":\"x\"}],\"tools\":{}}"sv,
      "\x80{\"input\":[\"Once upon a time\",\"The dog\"],\"encoding_format\":\"base64\",\"embd_normalize\":2}"sv,
      "\x80{\"input\":[[1,450,4996],[1]],\"encoding_format\":\"float\"}"sv,
      // Structured output: each way of asking for it.
      "\x01{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"response_format\":{\"type\":\"json_schema\","
      "\"json_schema\":{\"name\":\"p\",\"strict\":true,\"schema\":{\"type\":\"object\",\"properties\":{\"a\":"
      "{\"type\":\"string\",\"maxLength\":3},\"b\":{\"enum\":[1,\"x\"]}},\"required\":[\"a\"]}}}}"sv,
      "\x01{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"response_format\":{\"type\":\"json_object\"}}"sv,
      "\x00{\"prompt\":\"hi\",\"json_schema\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/$defs/n\"},"
      "\"$defs\":{\"n\":{\"type\":\"integer\"}}}}"sv,
      "\x00{\"prompt\":\"hi\",\"grammar\":\"root ::= [a-z]{1,4} (\\\"!\\\" | \\\"?\\\")*\"}"sv,
      // Anthropic messages (0xC3: the Hermes Jinja template): system blocks, a tool_use answered by
      // its tool_result, thinking, tool_choice, stop sequences.
      "\xC3{\"system\":[{\"type\":\"text\",\"text\":\"Be brief.\"}],\"max_tokens\":8,\"messages\":["
      "{\"role\":\"user\",\"content\":\"weather?\"},{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\","
      "\"thinking\":\"hm\"},{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"w\",\"input\":{}}]},{\"role\":\"user\","
      "\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"t1\",\"content\":[{\"type\":\"text\",\"text\":\"3 C\"}]}]}],"
      "\"tools\":[{\"name\":\"w\",\"input_schema\":{\"type\":\"object\"}}],\"tool_choice\":{\"type\":\"any\"},"
      "\"stop_sequences\":[\"a\",\"b\",\"c\",\"d\",\"e\"],\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":1024}}"sv,
      "\x81{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}],\"top_k\":5}"sv,
      "\x86{\"query\":\"dog\",\"documents\":[\"a dog\",\"a cat\"],\"top_n\":1}"sv,
      "\x86{\"query\":\"q\",\"texts\":[\"x\"],\"return_text\":true}"sv,
      // llama-server's /completion (0x82), /infill (0x84) and /v1/rerank (0x86, above).
      "\x82{\"prompt\":[\"Once\",450,\" upon\"],\"n_predict\":0,\"n_probs\":3,\"samplers\":\"ekt\",\"seed\":-1,"
      "\"stop\":[\"a\",\"b\",\"c\",\"d\",\"e\"],\"mirostat\":0,\"id_slot\":1,\"return_tokens\":true}"sv,
      "\x84{\"input_prefix\":\"def f():\\n    \",\"input_suffix\":\"\\n\",\"prompt\":\"return\",\"input_extra\":"
      "[{\"filename\":\"a.py\",\"text\":\"x = 1\"},{\"text\":\"y\"}],\"n_predict\":4,\"samplers\":[\"top_k\",\"temperature\"]}"sv,
  };
  for (size_t i = 0; i < std::size(kRequests); i++) write_file(out / "request" / std::to_string(i), std::string(kRequests[i]));
  // Byte 0: even = GBNF, odd = JSON schema; a NUL byte, then a text to match.
  const std::string_view kGrammars[] = {
      "\x00root ::= (\"a\" | [b-d]+)* item{2,3}\nitem ::= [^\\n\\x00-\\x1F] \"\\u00e9\"?\n\0aabcdxy\xC3\xA9z"sv,
      "\x00root ::= \"(\" root \")\" | \"x\" # nested\n\0((x))"sv,
      "\x01{\"type\":\"object\",\"properties\":{\"k\":{\"type\":\"array\",\"items\":{\"anyOf\":[{\"type\":\"number\"},"
      "{\"const\":null}]},\"minItems\":1}},\"required\":[\"k\"]}\0{\"k\": [1.5, null]}"sv,
      "\x01{\"oneOf\":[{\"type\":\"string\",\"minLength\":2},{\"type\":\"boolean\"}]}\0\"ab\""sv,
      // Integer bounds (digit ranges), string formats and a pattern.
      "\x01{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\",\"minimum\":-37,\"exclusiveMaximum\":1005},"
      "\"d\":{\"type\":\"string\",\"format\":\"date-time\"},\"c\":{\"type\":\"string\",\"pattern\":\"^[A-Z]{2}(-\\\\d+|x)*?$\"}},"
      "\"required\":[\"n\",\"d\",\"c\"]}\0{\"n\": -12, \"d\": \"2026-12-02T01:02:03Z\", \"c\": \"AB-12x\"}"sv,
  };
  for (size_t i = 0; i < std::size(kGrammars); i++) write_file(out / "grammar" / std::to_string(i), std::string(kGrammars[i]));

  const fs::path data = fuzz::testdata_path("");
  if (!fs::exists(data / "models")) {
    std::cerr << "fuzz_seeds: no test data at " << data << " (set HART_TESTDATA); corpora left empty\n";
    return 0;
  }
  try {
    // NAME.gguf paths; the large vocabularies are stored as NAME.gguf.gz.
    std::vector<fs::path> files;
    for (const char* sub : {"models", "tokenizer", "archs/tokenizer"}) {
      if (!fs::exists(data / sub)) continue;
      for (const auto& e : fs::directory_iterator(data / sub)) {
        fs::path p = e.path();
        if (p.extension() == ".gz") p.replace_extension();
        if (p.extension() == ".gguf") files.push_back(p);
      }
    }
    const fs::path rwkv = data / "archs/models/rwkv7-tiny-F32.gguf";
    if (fs::exists(rwkv)) files.push_back(rwkv);
    for (const fs::path& p : files) {
      const auto f = fuzz::open_testdata_gguf(p.string());
      const std::string stem = p.stem().string();
      write_file(out / "gguf" / (stem + ".gguf"), as_string(shrink_model(*f)));
      if (const auto tmpl = f->get_string("tokenizer.chat_template")) write_file(out / "chat" / stem, *tmpl);
      if (p.parent_path().filename() == "tokenizer" || p == rwkv) {
        for (size_t n : {300, 1200}) {
          write_file(out / "vocab" / (stem + "-" + std::to_string(n) + ".gguf"), as_string(shrink_vocab(*f, n)));
        }
      }
    }
    if (fs::exists(data / "chat_templates/templates"))
      for (const auto& e : fs::directory_iterator(data / "chat_templates/templates"))
        if (e.path().extension() == ".jinja") {
          std::ifstream in(e.path(), std::ios::binary);
          write_file(out / "chat" / e.path().stem(), std::string(std::istreambuf_iterator<char>(in), {}));
        }
    const std::vector<std::string> texts = test_strings(data / "tokenizer/ggml-vocab-llama-spm.gguf.inp");
    for (size_t i = 0; i < texts.size(); i++) {
      // Byte 0 picks one of fuzz_tokenize's 13 vocabularies (every third one here) and the flags.
      for (uint8_t selector = 0; selector < 13; selector += 3) {
        write_file(out / "tokenize" / (std::to_string(i) + "-" + std::to_string(selector)),
                   std::string(1, char(selector + i % 4 * 0x40)) + texts[i]);
      }
    }
  } catch (const Error& e) {
    std::cerr << "fuzz_seeds: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
