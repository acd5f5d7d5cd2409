// The C API's errors, versions, strings and live-handle registry.
#include <cstdlib>
#include <cstring>
#include <new>
#include <shared_mutex>
#include <unordered_map>

#include "grammar/tokenizer_vocab.h"
#include "lib/api.h"
#include "backend/registry.h"

namespace hart::api {
namespace {

struct LastError {
  hart_status status = HART_OK;
  std::string message;
};
thread_local LastError last_error;

std::shared_mutex registry_mutex;
std::unordered_map<const void*, Kind>& registry() {
  static auto* r = new std::unordered_map<const void*, Kind>;  // never destroyed: handles may outlive static destruction
  return *r;
}

}  // namespace

void set_error(hart_status status, const std::string& message) {
  last_error.status = status;
  last_error.message = message;
}

hart_status last_status() noexcept { return last_error.status; }

void record_exception(hart_status error_status) noexcept {
  try {
    throw;
  } catch (const Failure& e) {
    set_error(e.status, e.what());
  } catch (const Error& e) {
    set_error(error_status, e.what());
  } catch (const std::bad_alloc&) {
    set_error(HART_ERR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    set_error(HART_ERR_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    set_error(HART_ERR_INTERNAL, "internal error: an unknown exception");
  }
}

void add_handle(const void* h, Kind k) {
  std::unique_lock lock(registry_mutex);
  registry()[h] = k;
}

void remove_handle(const void* h) {
  std::unique_lock lock(registry_mutex);
  registry().erase(h);
}

bool is_live(const void* h, Kind k) {
  std::shared_lock lock(registry_mutex);
  const auto it = registry().find(h);
  return it != registry().end() && it->second == k;
}

void need(bool ok, const std::string& message) {
  if (!ok) fail(HART_ERR_INVALID_ARGUMENT, message);
}

void need_buffer(const void* p, int64_t n, const char* what) {
  need(n >= 0, std::string(what) + "'s size is negative (" + std::to_string(n) + ")");
  need(p || n == 0, std::string(what) + " is NULL");
}

int32_t put_text(const std::string& text, char* buf, int32_t len) {
  need_buffer(buf, len, "buf");
  need(text.size() < size_t(INT32_MAX), "the text is longer than 2 GiB");
  const auto n = int32_t(text.size());
  if (n + 1 > len) {
    set_error(HART_ERR_BUFFER_TOO_SMALL, "the buffer holds " + std::to_string(len) + " bytes; the text needs " +
                                             std::to_string(n + 1));
    return -(n + 1);
  }
  std::memcpy(buf, text.data(), text.size());
  buf[n] = '\0';
  return n;
}

char* new_string(const std::string& s) {
  char* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (!p) throw std::bad_alloc();
  std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  return p;
}

BackendSet ModelCore::backends(int threads) const {
  return BackendSet(split_backend_names(devices), threads > 0 ? threads : n_threads, "", cpu_mask);
}

const grammar::VocabTrie& ModelCore::trie() const {
  std::call_once(trie_once_, [&] { trie_ = grammar::vocab_trie_for(tok()); });
  return *trie_;
}

}  // namespace hart::api

using namespace hart::api;

extern "C" {

const char* hart_version(void) { return HART_VERSION_STRING; }

int32_t hart_abi_version(void) { return HART_ABI_VERSION; }

const char* hart_last_error(void) { return last_error.message.c_str(); }

hart_status hart_last_status(void) { return last_error.status; }

const char* hart_status_name(hart_status status) {
  switch (status) {
    case HART_OK: return "HART_OK";
    case HART_ERR_INVALID_ARGUMENT: return "HART_ERR_INVALID_ARGUMENT";
    case HART_ERR_BUFFER_TOO_SMALL: return "HART_ERR_BUFFER_TOO_SMALL";
    case HART_ERR_BAD_FILE: return "HART_ERR_BAD_FILE";
    case HART_ERR_UNSUPPORTED: return "HART_ERR_UNSUPPORTED";
    case HART_ERR_CONTEXT_FULL: return "HART_ERR_CONTEXT_FULL";
    case HART_ERR_OUT_OF_MEMORY: return "HART_ERR_OUT_OF_MEMORY";
    case HART_ERR_CANCELLED: return "HART_ERR_CANCELLED";
    case HART_ERR_FAILED: return "HART_ERR_FAILED";
    case HART_ERR_INTERNAL: return "HART_ERR_INTERNAL";
  }
  return "an unknown status";
}

void hart_string_free(char* s) { std::free(s); }

}  // extern "C"
