// The C API's models: loading, metadata and vocabulary queries, tokenize and detokenize.
#include <climits>
#include <cstring>
#include <nlohmann/json.hpp>

#include "backend/cpu/kernels.h"
#include "backend/registry.h"
#include "gguf/gguf.h"
#include "lib/api.h"
#include "lib/chat_template.h"

using namespace hart;
using namespace hart::api;

// The backends register themselves from object files nothing else refers to; from libhart.a a
// linker takes only members something refers to, so the model loader refers to them.
namespace hart::cpu {
extern const int kCpuRegistrationAnchor;
}
#ifdef HART_HAVE_ET
namespace hart::et {
extern const int kEtRegistrationAnchor;
}
#endif

namespace {

[[gnu::used]] const int* const kRegistrationAnchors[] = {
    &cpu::kCpuRegistrationAnchor,
#ifdef HART_HAVE_ET
    &et::kEtRegistrationAnchor,
#endif
};

const ModelCore& core_of(const hart_model* model) { return *live(model, Kind::MODEL, "model").core; }

// A metadata value as JSON: arrays whole, strings as they are.
nlohmann::json meta_json(const gguf::Value& v) {
  return std::visit(
      [](const auto& x) -> nlohmann::json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::shared_ptr<gguf::Array>>) {
          nlohmann::json items = nlohmann::json::array();
          for (const gguf::Value& item : x->items) items.push_back(meta_json(item));
          return items;
        } else {
          return x;
        }
      },
      v);
}

// A token id of the model's vocabulary, checked.
void need_token(const ModelCore& c, int32_t token) {
  need(token >= 0 && token < c.tok().n_vocab(),
       "token " + std::to_string(token) + " is outside the vocabulary of " + std::to_string(c.tok().n_vocab()));
}

}  // namespace

extern "C" {

hart_model_params hart_model_default_params(void) {
  hart_model_params p;
  p.n_threads = 0;
  p.cpu_mask = 0;
  p.use_mmap = false;
  p.devices = nullptr;
  return p;
}

hart_model* hart_model_load(const char* path, const hart_model_params* params) {
  return guarded<hart_model*>(nullptr, HART_ERR_BAD_FILE, [&] {
    need(path != nullptr, "path is NULL");
    const hart_model_params p = params ? *params : hart_model_default_params();
    need(p.n_threads >= 0 && p.n_threads <= 4096, "n_threads must be from 0 to 4096, not " + std::to_string(p.n_threads));
    auto core = std::make_shared<ModelCore>();
    core->n_threads = p.n_threads;
    core->cpu_mask = p.cpu_mask;
    if (p.devices && *p.devices) core->devices = {p.devices};
    // Names first: a mistake there fails before a large file is read.
    try {
      for (const std::string& name : split_backend_names(core->devices)) find_backend(name);
      cpu::kernels();  // the kernel set HART_ISA names, when set
    } catch (const Error& e) {
      fail(HART_ERR_INVALID_ARGUMENT, e.what());
    }
    core->lm = open_model(path, p.use_mmap);
    core->name = std::string(path).substr(std::string(path).find_last_of('/') + 1);
    core->chat = choose_chat_formatter(core->model().file.get(), core->tok(), {}, ChatTemplate::CHATML);
    return registered(new hart_model{std::move(core)}, Kind::MODEL);
  });
}

void hart_model_free(hart_model* model) {
  free_handle(model, Kind::MODEL);
}

int32_t hart_n_vocab(const hart_model* model) {
  return guarded<int32_t>(HART_ERROR_COUNT, HART_ERR_FAILED, [&] { return core_of(model).model().hp.n_vocab; });
}

int32_t hart_n_embd(const hart_model* model) {
  return guarded<int32_t>(HART_ERROR_COUNT, HART_ERR_FAILED, [&] { return core_of(model).model().hp.n_embd; });
}

int32_t hart_n_layer(const hart_model* model) {
  return guarded<int32_t>(HART_ERROR_COUNT, HART_ERR_FAILED, [&] { return core_of(model).model().hp.n_layer; });
}

int32_t hart_n_ctx_train(const hart_model* model) {
  return guarded<int32_t>(HART_ERROR_COUNT, HART_ERR_FAILED, [&] { return core_of(model).model().hp.n_ctx_train; });
}

int32_t hart_model_meta(const hart_model* model, const char* key, char* buf, int32_t len) {
  return guarded<int32_t>(HART_ERROR_COUNT, HART_ERR_FAILED, [&]() -> int32_t {
    const ModelCore& c = core_of(model);
    need(key != nullptr, "key is NULL");
    const gguf::Value* v = c.model().file ? c.model().file->find(key) : nullptr;
    if (!v) fail(HART_ERR_INVALID_ARGUMENT, std::string("the model has no metadata key '") + key + "'");
    const nlohmann::json j = meta_json(*v);
    return put_text(j.is_string() ? j.get<std::string>() : j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                    buf, len);
  });
}

int32_t hart_token_bos(const hart_model* model) {
  return guarded<int32_t>(HART_TOKEN_NONE, HART_ERR_FAILED, [&] { return core_of(model).tok().bos(); });
}

int32_t hart_token_eos(const hart_model* model) {
  return guarded<int32_t>(HART_TOKEN_NONE, HART_ERR_FAILED, [&] { return core_of(model).tok().eos(); });
}

int32_t hart_token_eot(const hart_model* model) {
  return guarded<int32_t>(HART_TOKEN_NONE, HART_ERR_FAILED, [&] { return core_of(model).tok().eot(); });
}

bool hart_token_is_eog(const hart_model* model, int32_t token) {
  return guarded<bool>(false, HART_ERR_FAILED, [&] {
    const ModelCore& c = core_of(model);
    need_token(c, token);
    return c.tok().is_eog(token);
  });
}

bool hart_token_is_control(const hart_model* model, int32_t token) {
  return guarded<bool>(false, HART_ERR_FAILED, [&] {
    const ModelCore& c = core_of(model);
    need_token(c, token);
    return c.tok().is_control(token);
  });
}

int32_t hart_tokenize(const hart_model* model, const char* text, int32_t text_len, int32_t* tokens,
                      int32_t n_tokens_max, bool add_special, bool parse_special) {
  return guarded<int32_t>(HART_ERROR_COUNT, HART_ERR_FAILED, [&]() -> int32_t {
    const ModelCore& c = core_of(model);
    need(text != nullptr, "text is NULL");
    need_buffer(tokens, n_tokens_max, "tokens");
    const size_t n_text = text_len < 0 ? std::strlen(text) : size_t(text_len);
    const std::vector<int32_t> ids = c.tok().encode(std::string_view(text, n_text), add_special, parse_special);
    need(ids.size() < size_t(INT32_MAX), "the text has more than 2^31 tokens");
    const auto n = int32_t(ids.size());
    if (n > n_tokens_max) {
      set_error(HART_ERR_BUFFER_TOO_SMALL, "the text has " + std::to_string(n) + " tokens; the buffer holds " +
                                               std::to_string(n_tokens_max));
      return -n;
    }
    std::copy(ids.begin(), ids.end(), tokens);
    return n;
  });
}

int32_t hart_token_to_piece(const hart_model* model, int32_t token, char* buf, int32_t len) {
  return guarded<int32_t>(HART_ERROR_COUNT, HART_ERR_FAILED, [&]() -> int32_t {
    const ModelCore& c = core_of(model);
    need_token(c, token);
    need_buffer(buf, len, "buf");
    const std::string piece = c.tok().token_to_piece(token);
    const auto n = int32_t(piece.size());
    if (n > len) {
      set_error(HART_ERR_BUFFER_TOO_SMALL, "token " + std::to_string(token) + "'s text has " + std::to_string(n) +
                                               " bytes; the buffer holds " + std::to_string(len));
      return -n;
    }
    std::memcpy(buf, piece.data(), piece.size());
    return n;
  });
}

int32_t hart_detokenize(const hart_model* model, const int32_t* tokens, int32_t n_tokens, char* buf, int32_t len,
                        bool special) {
  return guarded<int32_t>(HART_ERROR_COUNT, HART_ERR_FAILED, [&] {
    const ModelCore& c = core_of(model);
    need_buffer(tokens, n_tokens, "tokens");
    for (int32_t i = 0; i < n_tokens; i++) need_token(c, tokens[i]);
    return put_text(c.tok().decode(std::span(tokens, size_t(n_tokens)), special), buf, len);
  });
}

}  // extern "C"
