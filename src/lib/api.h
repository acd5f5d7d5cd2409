// What the C API's functions (api_*.cpp) share: the objects behind its opaque handles, the
// registry that tells a live handle from a freed or foreign pointer, and the guard that turns
// every exception into a status and a thread-local message, so none crosses the C boundary.
#pragma once

#include <hart.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>
#include <string>
#include <vector>

#include "backend/backend_set.h"
#include "chat/chat_formatter.h"
#include "common/error.h"
#include "grammar/grammar_constraint.h"
#include "grammar/vocab_trie.h"
#include "lib/model_files.h"
#include "model/session.h"
#include "sample/sampler.h"

namespace hart::serve {
class Engine;
class Metrics;
}  // namespace hart::serve

namespace hart::api {

// A loaded model and what every handle made from it shares; kept alive by those handles.
struct ModelCore {
  LoadedModel lm;
  std::string name;  // the file's name, as `hart serve` reports it
  int n_threads = 0;
  uint64_t cpu_mask = 0;
  std::vector<std::string> devices;
  std::optional<ChatFormatter> chat;  // the GGUF's template, chatml when it has none

  const Model& model() const { return *lm.model; }
  const Tokenizer& tok() const { return *lm.tokenizer; }
  // The backends a session or engine runs on: the model params' devices, the CPU last.
  BackendSet backends(int threads) const;
  // The vocabulary trie constrained sampling walks, built on first use (thread-safe).
  const grammar::VocabTrie& trie() const;

 private:
  mutable std::once_flag trie_once_;
  mutable std::unique_ptr<grammar::VocabTrie> trie_;
};

// Thrown inside the API for a failure whose status is not what its exception type maps to.
class Failure : public Error {
 public:
  Failure(hart_status status, const std::string& message) : Error(message), status(status) {}
  hart_status status;
};

[[noreturn]] inline void fail(hart_status status, const std::string& message) { throw Failure(status, message); }

// Records a failure for hart_last_error / hart_last_status.
void set_error(hart_status status, const std::string& message);

// Runs f, returning what it returns; an exception becomes `on_error` and a recorded failure
// (hart::Error: `error_status`; std::bad_alloc: HART_ERR_OUT_OF_MEMORY; anything else:
// HART_ERR_INTERNAL).
void record_exception(hart_status error_status) noexcept;
template <class R, class F>
R guarded(R on_error, hart_status error_status, F&& f) noexcept {
  try {
    return f();
  } catch (...) {
    record_exception(error_status);
    return on_error;
  }
}

// As guarded, for a function that returns a status (or a count or token >= 0): a failure
// returns its status.
hart_status last_status() noexcept;
template <class F>
auto guarded_status(hart_status error_status, F&& f) noexcept -> decltype(f()) {
  try {
    return f();
  } catch (...) {
    record_exception(error_status);
    return last_status();
  }
}

// The live-handle registry: handles are added when made and removed when freed, so a call can
// refuse NULL, a freed handle or one of another kind before touching its memory.
enum class Kind { MODEL, SESSION, SAMPLER, ENGINE, GENERATION, REQUEST };
void add_handle(const void* h, Kind k);
void remove_handle(const void* h);
bool is_live(const void* h, Kind k);

// A new handle, registered.
template <class H>
H* registered(H* h, Kind k) {
  add_handle(h, k);
  return h;
}
// Frees a live handle of kind k; NULL, freed and foreign pointers are ignored.
template <class H>
void free_handle(H* h, Kind k) noexcept {
  if (!h || !is_live(h, k)) return;
  remove_handle(h);
  delete h;
}

// The handle `h` named `what` in messages, checked; throws Failure(INVALID_ARGUMENT).
template <class H>
H& live(H* h, Kind k, const char* what) {
  if (!h) fail(HART_ERR_INVALID_ARGUMENT, std::string(what) + " is NULL");
  if (!is_live(h, k)) fail(HART_ERR_INVALID_ARGUMENT, std::string(what) + " is not a live handle (freed, or of another kind)");
  return *h;
}

// Argument checks: each throws Failure(INVALID_ARGUMENT) naming the argument.
void need(bool ok, const std::string& message);
// A buffer of n elements at p: n >= 0, and p non-NULL when n > 0.
void need_buffer(const void* p, int64_t n, const char* what);

// Copies bytes into buf (len bytes) with a NUL: their length, or -(length + 1) when it does not fit.
int32_t put_text(const std::string& text, char* buf, int32_t len);
// A string the caller frees with hart_string_free.
char* new_string(const std::string& s);

// A KV cache type between the API's enum and the engine's: the engine's, after checking the
// caller's value is one of the enum's (hart::Error otherwise); and the API's for the engine's.
// An enum field of a caller's struct, read as its underlying integer: a C caller may store any int
// there, and loading one that is not an enumerator as the enum type is undefined in C++.
template <class E>
std::underlying_type_t<E> enum_bits(const E& field) {
  std::underlying_type_t<E> bits;
  std::memcpy(&bits, &field, sizeof bits);
  return bits;
}

inline Type cache_type_of(const hart_cache_type& field) {
  const auto t = enum_bits(field);
  need(t == HART_CACHE_F16 || t == HART_CACHE_F32, "cache_type is not a hart_cache_type");
  return t == HART_CACHE_F32 ? Type::F32 : Type::F16;
}
inline hart_cache_type api_cache_type(Type t) { return t == Type::F32 ? HART_CACHE_F32 : HART_CACHE_F16; }

// A live session a call is about to change (decode, truncate, ...): refused while a generation
// is open on it, whose sequence and logits would move under it.
hart_session& changeable_session(hart_session* s);

// Advances the sampler's grammar (if any) by a token the sequence took: false once nothing but
// the end can follow. Throws Failure(INVALID_ARGUMENT) for a token the grammar does not allow.
bool advance_grammar(hart_sampler& h, int32_t token);

}  // namespace hart::api

struct hart_model {
  std::shared_ptr<hart::api::ModelCore> core;
};

struct hart_session {
  std::shared_ptr<hart::api::ModelCore> core;
  hart::Session s;
  size_t n_inputs = 0;  // of the last decode (Session::rows)
  const float* last_logits = nullptr;
  std::atomic<bool> cancel{false};
  const hart_generation* generation = nullptr;  // the open generation using the session
};

struct hart_sampler {
  std::shared_ptr<hart::api::ModelCore> core;
  hart::Sampler s;
  std::shared_ptr<const hart::grammar::Grammar> grammar;
  std::unique_ptr<hart::grammar::GrammarConstraint> constraint;
  const hart_generation* generation = nullptr;  // the open generation using the sampler
};
