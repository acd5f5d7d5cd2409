// The C API's chat: rendering a conversation with the model's template, and the engine that
// answers OpenAI requests in process with `hart serve`'s own code (parse_request, Engine,
// ResponseWriter): tools, response_format and the rest behave as they do over HTTP.
#include <nlohmann/json.hpp>

#include "lib/api.h"
#include "serve/engine.h"
#include "serve/metrics.h"
#include "serve/image_input.h"
#include "serve/openai_api.h"
#include "vision/multimodal.h"

using namespace hart;
using namespace hart::api;

struct hart_engine {
  hart_engine(std::shared_ptr<ModelCore> c, const serve::EngineOptions& eo)
      : core(std::move(c)), engine(core->model(), core->tok(), eo, core->backends(0), metrics) {}
  std::shared_ptr<ModelCore> core;
  serve::Metrics metrics;
  serve::Engine engine;
  std::unique_ptr<vision::ClipModel> clip;  // hart_engine_load_mmproj's
  std::unique_ptr<serve::ImageEncoder> images;
};

namespace {

const ModelCore& core_of(const hart_model* model) { return *live(const_cast<hart_model*>(model), Kind::MODEL, "model").core; }

// A request body, parsed; a server's 400 is the caller's HART_ERR_INVALID_ARGUMENT.
nlohmann::ordered_json parse_body(const char* json, const char* what) {
  need(json != nullptr, std::string(what) + " is NULL");
  auto body = nlohmann::ordered_json::parse(json, nullptr, false);
  need(!body.is_discarded(), std::string(what) + " is not valid JSON");
  return body;
}

std::string dump(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

// Runs f, turning the server's refusals (ApiError: a 4xx is the request's fault) into statuses.
template <class F>
auto as_request(F&& f) {
  try {
    return f();
  } catch (const serve::ApiError& e) {
    fail(e.status < 500 ? HART_ERR_INVALID_ARGUMENT : HART_ERR_FAILED, e.what());
  } catch (const serve::QueueFull& e) {
    fail(HART_ERR_FAILED, e.what());
  }
}

}  // namespace

extern "C" {

int32_t hart_chat_apply(const hart_model* model, const hart_chat_message* messages, int32_t n_messages,
                        bool add_generation_prompt, char* buf, int32_t len) {
  return guarded<int32_t>(HART_ERROR_COUNT, HART_ERR_FAILED, [&] {
    const ModelCore& c = core_of(model);
    need_buffer(messages, n_messages, "messages");
    ChatRequest r;
    for (int32_t i = 0; i < n_messages; i++) {
      need(messages[i].role && messages[i].content, "message " + std::to_string(i) + " has a NULL role or content");
      r.messages.push_back({{"role", messages[i].role}, {"content", messages[i].content}});
    }
    r.add_generation_prompt = add_generation_prompt;
    std::string text;
    try {
      text = c.chat->apply(r);
    } catch (const Error& e) {
      fail(HART_ERR_INVALID_ARGUMENT, std::string("the chat template cannot render these messages: ") + e.what());
    }
    return put_text(text, buf, len);
  });
}

char* hart_chat_apply_json(const hart_model* model, const char* request_json) {
  return guarded<char*>(nullptr, HART_ERR_FAILED, [&] {
    const ModelCore& c = core_of(model);
    const auto body = parse_body(request_json, "request_json");
    return new_string(as_request([&] { return serve::chat_prompt_text(body, *c.chat); }));
  });
}

hart_engine_params hart_engine_default_params(void) {
  const serve::EngineOptions d;
  hart_engine_params p;
  p.n_ctx = d.n_ctx;
  p.kv_size = d.kv_size;
  p.chunk_size = d.chunk_size;
  p.max_queue = d.max_queue;
  p.prefix_cache = d.prefix_cache;
  p.cache_type = api_cache_type(d.cache_type);
  return p;
}

hart_engine* hart_engine_new(hart_model* model, const hart_engine_params* params) {
  return guarded<hart_engine*>(nullptr, HART_ERR_FAILED, [&] {
    const auto& core = live(model, Kind::MODEL, "model").core;
    const hart_engine_params p = params ? *params : hart_engine_default_params();
    need(p.n_ctx >= 0 && p.kv_size >= 0 && p.max_queue >= 0, "n_ctx, kv_size and max_queue must not be negative");
    need(p.chunk_size > 0, "chunk_size must be positive, not " + std::to_string(p.chunk_size));
    serve::EngineOptions eo;
    eo.n_ctx = p.n_ctx;
    eo.kv_size = p.kv_size;
    eo.chunk_size = p.chunk_size;
    eo.max_queue = p.max_queue;
    eo.prefix_cache = p.prefix_cache;
    eo.cache_type = cache_type_of(p.cache_type);
    return registered(new hart_engine(core, eo), Kind::ENGINE);
  });
}

void hart_engine_free(hart_engine* engine) {
  free_handle(engine, Kind::ENGINE);
}

bool hart_engine_load_mmproj(hart_engine* engine, const char* path) {
  return guarded<bool>(false, HART_ERR_FAILED, [&] {
    hart_engine& e = live(engine, Kind::ENGINE, "engine");
    need(path != nullptr, "path is NULL");
    std::unique_ptr<vision::ClipModel> clip;
    try {
      clip = vision::ClipModel::open(path);
      vision::check_pair(*clip, e.core->model());
    } catch (const Error& err) {
      need(false, err.what());
    }
    e.images = std::make_unique<serve::ImageEncoder>(*clip, BackendSet({"cpu"}, 0, ""));
    e.clip = std::move(clip);
    return true;
  });
}

char* hart_engine_request(hart_engine* engine, bool chat, const char* body_json, hart_chunk_callback on_chunk,
                          void* user_data) {
  return guarded<char*>(nullptr, HART_ERR_FAILED, [&] {
    hart_engine& e = live(engine, Kind::ENGINE, "engine");
    const auto body = parse_body(body_json, "body_json");
    const ModelCore& c = *e.core;
    return as_request([&] {
      const serve::ApiRequest req = serve::parse_request(body, chat ? serve::Endpoint::CHAT : serve::Endpoint::COMPLETION,
                                                         {c.tok(), *c.chat, e.engine.n_ctx(), nullptr, 0, e.images.get()});
      need(!req.stream || on_chunk, "a streamed request (\"stream\": true) needs on_chunk");
      const std::shared_ptr<serve::Stream> stream = e.engine.submit(req.gen);
      serve::ResponseWriter w(req, c.tok(), c.name);
      // Until every choice is done: the engine answers a cancel with a last event for each.
      try {
        while (!w.finished()) {
          const serve::Event ev = stream->pop();
          if (!req.stream) {
            w.add(ev);
            continue;
          }
          for (const nlohmann::json& chunk : w.chunks(ev))
            if (!stream->cancelled() && !on_chunk(dump(chunk).c_str(), user_data)) stream->cancel();
        }
      } catch (...) {  // the other choices are not wanted any more
        stream->cancel();
        throw;
      }
      if (stream->cancelled()) fail(HART_ERR_CANCELLED, "on_chunk cancelled the request");
      return new_string(req.stream ? "null" : dump(w.response()));
    });
  });
}

}  // extern "C"
