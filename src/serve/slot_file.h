// The files of llama-server's slot persistence (POST /slots/{id}?action=save|restore, under
// --slot-save-path): a slot's tokens and its computed state (kv::SequenceStore::save's bytes:
// the K/V rows, window rows and recurrent cell) behind a header naming the model they were
// computed by, and a SHA-256 of everything before it, so that a restore refuses a file of
// another model or a damaged one before any of it reaches the KV pool.
//
// Layout (little-endian): "HARTSLOT", u32 version, 64 hex digits of the model's fingerprint,
// u32 length + the model's description (for messages), u32 n_tokens + i32 tokens, u32 n + the f32
// scale of each LoRA adapter the tokens were computed with (0 adapters: the base weights), u64
// length + the state's bytes, then 64 hex digits: the SHA-256 of all bytes before them.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace hart {
struct Model;
}

namespace hart::serve {

// A slot file that cannot be restored here: what is wrong with it, in one line.
class SlotFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SlotModel {
  std::string fingerprint;  // 64 hex digits
  std::string description;  // e.g. "llama, 5 layers, 64 wide, 512 tokens"
};

// A SHA-256 over what makes the state mean something: the architecture, every tensor's name,
// type and shape, the first and last bytes of its data, and the vocabulary; and the same of each
// LoRA adapter loaded for the model (Model::loras), in order. Two files of the same shape
// (another fine-tune, another tokenizer, other adapters) differ in it.
SlotModel slot_model(const Model& m);

struct SlotContents {
  std::vector<int32_t> tokens;
  std::vector<float> lora;  // the adapter scales the tokens were computed with; empty: none
  std::vector<uint8_t> state;
};

std::vector<uint8_t> encode_slot_file(const SlotModel& model, const SlotContents& c);
// Throws SlotFileError for bytes that are not a slot file, a damaged one, or one of another model.
SlotContents decode_slot_file(std::span<const uint8_t> bytes, const SlotModel& model);

// llama.cpp's rule for --slot-save-path file names (fs_validate_filename), or stricter: 1-255
// bytes of UTF-8, no control character, none of / \ : * ? " < > | nor the look-alikes U+FF0E,
// U+2215, U+2216, no leading or trailing space, no trailing dot, not "." or "..", and no
// byte-order mark or U+FFFD.
bool valid_slot_filename(const std::string& name);

}  // namespace hart::serve
