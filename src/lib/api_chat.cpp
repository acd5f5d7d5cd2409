// The C API's chat: rendering a conversation with the model's template, and the engine that
// answers OpenAI requests in process with `hart serve`'s own code (parse_request, Engine,
// ResponseWriter): tools, response_format and the rest behave as they do over HTTP.
#include <deque>
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

// A submitted request: the engine's stream of events, turned into the response (or its chunks)
// by `hart serve`'s own writer.
struct hart_request {
  hart_request(hart_engine& e, serve::ApiRequest r)
      : engine(&e), req(std::move(r)), writer(req, e.core->tok(), e.core->name) {}
  ~hart_request() {
    if (stream && !writer.finished()) stream->cancel();  // the engine drops it at its next step
  }
  hart_engine* engine;
  serve::ApiRequest req;
  serve::ResponseWriter writer;  // reads req
  std::shared_ptr<serve::Stream> stream;
  std::deque<std::string> pending;  // chunks of the last event not handed out yet
  std::string out;                  // what the last hart_request_next handed out
  bool responded = false;           // the non-streamed response was handed out
};

namespace {

// The request's next output into r.out: false once everything was handed out.
bool read_output(hart_request& r) {
  if (!r.req.stream) {  // the one response, once every choice is done
    if (r.responded) return false;
    while (!r.writer.finished()) r.writer.add(r.stream->pop());
    r.out = dump(r.writer.response());
    r.responded = true;
    return true;
  }
  // Until an event makes a chunk (some make none) or every choice is done.
  while (r.pending.empty() && !r.writer.finished())
    for (const nlohmann::json& chunk : r.writer.chunks(r.stream->pop())) r.pending.push_back(dump(chunk));
  if (r.pending.empty()) return false;
  r.out = std::move(r.pending.front());
  r.pending.pop_front();
  return true;
}

std::unique_ptr<hart_request> submit(hart_engine* engine, bool chat, const char* body_json) {
  hart_engine& e = live(engine, Kind::ENGINE, "engine");
  const auto body = parse_body(body_json, "body_json");
  const ModelCore& c = *e.core;
  return as_request([&] {
    auto r = std::make_unique<hart_request>(
        e, serve::parse_request(body, chat ? serve::Endpoint::CHAT : serve::Endpoint::COMPLETION,
                                {c.tok(), *c.chat, e.engine.n_ctx(), nullptr, 0, e.images.get()}));
    r->stream = e.engine.submit(r->req.gen);
    return r;
  });
}

// read_output, once the engine is known to be still there (a freed one would never answer).
bool next_output(hart_request& r) {
  need(is_live(r.engine, Kind::ENGINE), "the request's engine was freed (free a request before its engine)");
  return as_request([&] { return read_output(r); });
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

hart_request* hart_engine_submit(hart_engine* engine, bool chat, const char* body_json) {
  return guarded<hart_request*>(nullptr, HART_ERR_FAILED, [&] {
    return registered(submit(engine, chat, body_json).release(), Kind::REQUEST);
  });
}

int hart_request_next(hart_request* request, const char** json) {
  return guarded_status(HART_ERR_FAILED, [&] {
    hart_request& r = live(request, Kind::REQUEST, "request");
    need(json != nullptr, "json is NULL");
    if (!next_output(r)) return 0;
    *json = r.out.c_str();
    return 1;
  });
}

void hart_request_free(hart_request* request) {
  free_handle(request, Kind::REQUEST);
}

char* hart_engine_request(hart_engine* engine, bool chat, const char* body_json, hart_chunk_callback on_chunk,
                          void* user_data) {
  return guarded<char*>(nullptr, HART_ERR_FAILED, [&] {
    const std::unique_ptr<hart_request> r = submit(engine, chat, body_json);
    need(!r->req.stream || on_chunk, "a streamed request (\"stream\": true) needs on_chunk");
    if (!r->req.stream) {
      need(next_output(*r), "the engine ended the request without a response");
      return new_string(r->out);
    }
    while (next_output(*r))
      if (!on_chunk(r->out.c_str(), user_data)) fail(HART_ERR_CANCELLED, "on_chunk cancelled the request");
    return new_string("null");
  });
}

}  // extern "C"
