#include "serve/http_server.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <nlohmann/json.hpp>

#include "model/lora.h"
#include "serve/anthropic_api.h"
#include "serve/client_socket.h"
#include "serve/native_api.h"
#include "serve/openai_api.h"
#include "serve/responses_api.h"

namespace hart::serve {

using nlohmann::json;

// Takes over one count of in-flight requests and gives it back when destroyed.
class InFlight {
 public:
  explicit InFlight(std::atomic<int>& n) : n_(n) {}
  ~InFlight() { n_--; }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;

 private:
  std::atomic<int>& n_;
};

namespace {

// How often a non-streaming request checks that its client is still there while no token comes.
constexpr std::chrono::milliseconds kClientCheck{50};

// Generated text may hold bytes that are not UTF-8 (a byte-fallback token of a model that
// emits them out of order): they become U+FFFD instead of an exception on an HTTP thread.
std::string to_text(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(to_text(body), "application/json");
}

// Anthropic's routes answer errors in Anthropic's shape, llama-server's own routes in its shape
// (the HTTP status as "code"), every other route in OpenAI's.
bool anthropic_route(const std::string& path) { return path.rfind("/v1/messages", 0) == 0; }
bool native_route(const std::string& path) {
  return path == "/completion" || path == "/completions" || path == "/infill" || path == "/props" || path.rfind("/slots", 0) == 0;
}

void send_error(const httplib::Request& req, httplib::Response& res, Metrics& m, int status, const std::string& type,
                const std::string& message, const std::string& param = {}) {
  m.request_rejected(status);
  json body = anthropic_route(req.path) ? anthropic_error_body(status, message) : error_body(message, type, param);
  if (native_route(req.path)) body = {{"error", {{"code", status}, {"message", message}, {"type", type}}}};
  send_json(res, status, body);
}

// The server's key, as OpenAI's clients send it (Authorization: Bearer) or Anthropic's (x-api-key).
bool authorized(const httplib::Request& req, const std::string& key) {
  return key.empty() || req.get_header_value("Authorization") == "Bearer " + key || req.get_header_value("x-api-key") == key;
}

template <class Json = json>
Json parse_body(const httplib::Request& req) {
  try {
    return Json::parse(req.body);
  } catch (const json::parse_error& e) {
    throw ApiError(400, "invalid_request_error", std::string("the body is not valid JSON: ") + e.what());
  }
}

// The generation routes: what a drain waits for. The pre-routing handler counts such a request
// in before anything else can see it, so a drain never misses one between the check and the
// handler; the handler's InFlight (or its stream's) counts it out.
bool generation_route(const httplib::Request& req) {
  return req.method == "POST" &&
         (req.path == "/v1/chat/completions" || req.path == "/v1/completions" || req.path == "/v1/responses" ||
          req.path == "/v1/messages" || req.path == "/completion" || req.path == "/completions" || req.path == "/infill");
}

// A request and its event stream, shared by the content provider's calls.
template <class Request>
struct StreamState {
  Request req;
  std::shared_ptr<Stream> stream;
  std::shared_ptr<InFlight> in_flight;
};

// While draining: the client is told to come back (to another replica, through a router), and
// the connection is closed so that a router's kept-alive connection does not bring the next one.
void refuse_draining(const httplib::Request& req, httplib::Response& res, Metrics& m) {
  res.set_header("Retry-After", "1");
  res.set_header("Connection", "close");
  send_error(req, res, m, 503, "unavailable_error", "the server is shutting down");
}

// /v1/models: the one model, with llama-server's "meta" (and hart's context and pool sizes).
json models_body(const std::string& name, const Model& m, const Tokenizer& tok, const Engine& engine) {
  int64_t n_params = 0, size = 0;
  for (const gguf::TensorInfo& t : m.file->tensors()) n_params += t.nelements(), size += int64_t(t.nbytes);
  // llama.cpp's llama_vocab_type numbers.
  const int vocab_type = tok.kind() == Tokenizer::Kind::Spm ? 1 : tok.kind() == Tokenizer::Kind::Bpe ? 2
                         : tok.kind() == Tokenizer::Kind::Wpm ? 3 : 5;
  const json meta = {{"vocab_type", vocab_type}, {"n_vocab", m.hp.n_vocab}, {"n_ctx_train", m.hp.n_ctx_train},
                     {"n_embd", m.hp.n_embd}, {"n_params", n_params}, {"size", size},
                     {"n_ctx", engine.n_ctx()}, {"kv_size", engine.kv_size()}};
  const json model = {{"id", name}, {"object", "model"}, {"created", 0}, {"owned_by", "hart"}, {"meta", meta}};
  return {{"object", "list"}, {"data", json::array({model})}};
}

}  // namespace

HttpServer::HttpServer(const ServerOptions& opt, Metrics& metrics)
    : opt_(opt), metrics_(metrics), http_(std::make_unique<httplib::Server>()) {
  const size_t threads = size_t(opt_.max_connections);
  http_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  routes();
}

HttpServer::~HttpServer() = default;

void HttpServer::bind() {
  if (!http_->bind_to_port(opt_.host, opt_.port))
    throw Error("cannot listen on " + opt_.host + ":" + std::to_string(opt_.port) + " (address in use or invalid)");
}

void HttpServer::run() {
  http_->listen_after_bind();
  run_returned_ = true;
}

// httplib's stop() only ends a loop already running: a stop() right after bind() (a model that
// fails to load at once) waits for run() to start it.
void HttpServer::stop() {
  while (!run_returned_ && !http_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  http_->stop();
}

PromptContext HttpServer::prompt_context(const Engine& engine) const {
  std::lock_guard lock(lora_mutex_);
  return {*tok_, *chat_, engine.n_ctx(), engine.speculation(), engine.chunk_size(), vision_, lora_};
}

void HttpServer::attach(Engine& engine, const Tokenizer& tok, ChatFormatter chat, Embedder& embedder, ImageEncoder* vision) {
  vision_ = vision;
  tok_ = &tok;
  embedder_ = &embedder;
  chat_.emplace(std::move(chat));
  if (!opt_.slot_save_path.empty()) slot_model_ = slot_model(engine.model());
  if (opt_.lora.size() != engine.model().loras.size())
    throw Error("server: " + std::to_string(opt_.lora.size()) + " adapter scales for " + std::to_string(engine.model().loras.size()) +
                " adapters");
  {
    std::lock_guard lock(lora_mutex_);
    lora_ = opt_.lora;
  }
  engine_ = &engine;
}

// The SSE frames of an event: chat/completions and completions send data chunks and [DONE];
// /v1/responses sends typed events.
std::vector<std::string> sse_frames(ResponseWriter& w, const Event& ev) {
  std::vector<std::string> out;
  for (const json& c : w.chunks(ev)) out.push_back("data: " + to_text(c) + "\n\n");
  if (w.finished()) out.push_back("data: [DONE]\n\n");
  return out;
}
std::vector<std::string> sse_error(ResponseWriter&, const ApiError& e) {
  return {"data: " + to_text(error_body(e.what(), e.type)) + "\n\n", "data: [DONE]\n\n"};
}
std::vector<std::string> sse_frames(ResponsesWriter& w, const Event& ev) {
  std::vector<std::string> out;
  for (const ResponsesEvent& e : w.events(ev)) out.push_back("event: " + e.type + "\ndata: " + to_text(e.data) + "\n\n");
  return out;
}
std::vector<std::string> sse_error(ResponsesWriter&, const ApiError& e) {
  const json data = {{"type", "error"}, {"code", e.type}, {"message", e.what()}, {"param", e.param.empty() ? json() : json(e.param)}};
  return {"event: error\ndata: " + to_text(data) + "\n\n"};
}
// llama-server's native stream: a data line per chunk, the last one with "stop": true, no [DONE].
std::vector<std::string> sse_frames(NativeWriter& w, const Event& ev) {
  std::vector<std::string> out;
  for (const json& c : w.chunks(ev)) out.push_back("data: " + to_text(c) + "\n\n");
  return out;
}
std::vector<std::string> sse_error(NativeWriter&, const ApiError& e) {
  return {"data: " + to_text({{"error", {{"code", e.status}, {"message", e.what()}, {"type", e.type}}}}) + "\n\n"};
}
std::vector<std::string> sse_frames(AnthropicWriter& w, const Event& ev) {
  std::vector<std::string> out;
  for (const AnthropicEvent& e : w.events(ev)) out.push_back("event: " + e.type + "\ndata: " + to_text(e.data) + "\n\n");
  return out;
}
std::vector<std::string> sse_error(AnthropicWriter&, const ApiError& e) {
  return {"event: error\ndata: " + to_text(anthropic_error_body(e.status, e.what())) + "\n\n"};
}

template <class Writer, class Request>
void HttpServer::serve_generation(Request req, std::shared_ptr<InFlight> in_flight, const httplib::Request& http_req,
                                  httplib::Response& res) {
  Engine& engine = *engine_.load();
  int want = -1;
  if constexpr (requires { req.id_slot; }) want = req.id_slot;
  req.gen.slot = engine.pick_slot(req.gen.prompt, want);
  auto st = std::make_shared<StreamState<Request>>(StreamState<Request>{std::move(req), nullptr, std::move(in_flight)});
  st->stream = engine.submit(st->req.gen);
  if (!st->req.stream) {
    // A client that hangs up frees its slots now, not after max_tokens more tokens: the
    // engine answers the cancel with a last event, which ends the wait.
    const ClientSocket client(http_req.remote_addr, http_req.remote_port, http_req.local_port);
    Writer w(st->req, *tok_, opt_.model_name);
    for (;;) {
      const std::optional<Event> ev = st->stream->pop_for(kClientCheck);
      if (client.gone()) st->stream->cancel();
      if (!ev) continue;
      try {
        w.add(*ev);
      } catch (...) {  // the other choices are not wanted any more
        st->stream->cancel();
        throw;
      }
      if (w.finished()) break;
    }
    send_json(res, 200, w.response());
    return;
  }
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream",
      [st, w = std::make_shared<Writer>(st->req, *tok_, opt_.model_name)](size_t, httplib::DataSink& sink) {
        const Event ev = st->stream->pop();
        std::vector<std::string> frames;
        bool failed = false;
        try {
          frames = sse_frames(*w, ev);
        } catch (const ApiError& e) {  // the stream ends with the error; other choices are cancelled
          frames = sse_error(*w, e);
          st->stream->cancel();
          failed = true;
        }
        for (const std::string& f : frames)
          if (!sink.write(f.data(), f.size())) {  // the client went away: free its slots
            st->stream->cancel();
            return false;
          }
        if (failed || w->finished()) sink.done();
        return true;
      },
      [st](bool) { st->stream->cancel(); });  // no-op once finished
}

void HttpServer::routes() {
  httplib::Server& s = *http_;

  // Authentication, readiness and draining, in front of every route but /health and /metrics.
  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (req.path == "/health" || req.path == "/metrics") return httplib::Server::HandlerResponse::Unhandled;
    if (!authorized(req, opt_.api_key)) {
      send_error(req, res, metrics_, 401, "authentication_error", "invalid or missing API key");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (!engine_) {
      send_error(req, res, metrics_, 503, "unavailable_error", "the model is still loading");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (opt_.embeddings_only && (generation_route(req) || req.path == "/v1/messages/count_tokens")) {
      send_error(req, res, metrics_, 501, "not_supported_error", "this server serves embeddings only (--embedding)");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (generation_route(req)) {
      in_flight_++;  // before the check: a drain that starts now waits for this request or refuses it
      if (draining_) {
        in_flight_--;
        refuse_draining(req, res, metrics_);
        return httplib::Server::HandlerResponse::Handled;
      }
    } else if (draining_ && req.method != "GET") {
      refuse_draining(req, res, metrics_);
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  s.set_exception_handler([this](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
    try {
      std::rethrow_exception(ep);
    } catch (const ApiError& e) {
      send_error(req, res, metrics_, e.status, e.type, e.what(), e.param);
    } catch (const QueueFull& e) {
      send_error(req, res, metrics_, 503, "server_busy", e.what());
    } catch (const std::exception& e) {
      send_error(req, res, metrics_, 500, "server_error", e.what());
    }
  });

  s.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    const Engine* engine = engine_;
    if (!engine) send_json(res, 503, {{"status", "loading"}});
    else if (draining_) send_json(res, 503, {{"status", "draining"}});
    else if (!engine->accepting()) send_json(res, 503, {{"status", "busy"}});
    else send_json(res, 200, {{"status", "ok"}});
  });
  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics_.prometheus(), "text/plain; version=0.0.4");
  });
  s.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
    send_json(res, 200, models_body(opt_.model_name, embedder_->model(), *tok_, *engine_.load()));
  });

  s.Post("/tokenize", [this](const httplib::Request& req, httplib::Response& res) {
    const json body = parse_body(req);
    if (!body.is_object() || !body.contains("content") || !body["content"].is_string())
      throw ApiError(400, "invalid_request_error", "'content' must be a string", "content");
    const auto flag = body.find("add_special");
    if (flag != body.end() && !flag->is_boolean())
      throw ApiError(400, "invalid_request_error", "'add_special' must be a boolean", "add_special");
    const bool add_special = flag != body.end() && flag->get<bool>();
    std::vector<int32_t> tokens;
    try {
      tokens = tok_->encode(body["content"].get<std::string>(), add_special, true);
    } catch (const Error& e) {  // a byte the vocabulary has no token for
      throw ApiError(400, "invalid_request_error", e.what(), "content");
    }
    send_json(res, 200, {{"tokens", tokens}});
  });
  s.Post("/detokenize", [this](const httplib::Request& req, httplib::Response& res) {
    const json body = parse_body(req);
    if (!body.is_object() || !body.contains("tokens") || !body["tokens"].is_array())
      throw ApiError(400, "invalid_request_error", "'tokens' must be an array of token ids", "tokens");
    std::vector<int32_t> ids;
    for (const json& t : body["tokens"]) {
      if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= tok_->n_vocab())
        throw ApiError(400, "invalid_request_error", "token " + t.dump() + " is not an id in the vocabulary", "tokens");
      ids.push_back(t.get<int32_t>());
    }
    send_json(res, 200, {{"content", tok_->decode(ids)}});
  });

  s.Post("/apply-template", [this](const httplib::Request& req, httplib::Response& res) {
    send_json(res, 200, {{"prompt", chat_prompt_text(parse_body<nlohmann::ordered_json>(req), *chat_)}});
  });
  const auto rerank = [this](const httplib::Request& req, httplib::Response& res) {
    if (!embedder_->ranks() || !embedder_->model().w.cls_out)
      throw ApiError(501, "not_supported_error", "this server does not rerank: load a reranker (e.g. Qwen3-Reranker; --reranking)");
    check_no_lora_applied();
    const json body = parse_body(req);
    RerankRequest r = parse_rerank_request(body, *embedder_->model().file, *tok_, embedder_->n_ctx());
    std::vector<float> scores;
    int n_tokens = 0;
    for (const auto& ids : r.inputs) {
      scores.push_back(embedder_->rank(ids));
      n_tokens += int(ids.size());
    }
    send_json(res, 200, rerank_response(scores, r, body, opt_.model_name, n_tokens));
  };
  for (const char* route : {"/rerank", "/reranking", "/v1/rerank", "/v1/reranking"}) s.Post(route, rerank);
  s.Post("/v1/embeddings", [this](const httplib::Request& req, httplib::Response& res) {
    check_no_lora_applied();
    const EmbeddingsRequest r = parse_embeddings_request(parse_body(req), *tok_, embedder_->n_ctx());
    std::vector<std::vector<float>> vectors;
    int n_tokens = 0;
    for (const auto& ids : r.inputs) {
      vectors.push_back(embedder_->embed(ids, r.normalize));
      n_tokens += int(ids.size());
    }
    send_json(res, 200, embeddings_response(vectors, r, opt_.model_name, n_tokens));
  });

  auto generate = [this](Endpoint endpoint) {
    return [this, endpoint](const httplib::Request& http_req, httplib::Response& res) {
      auto in_flight = std::make_shared<InFlight>(in_flight_);  // counted in by the pre-routing handler
      const Engine& engine = *engine_.load();
      serve_generation<ResponseWriter>(
          parse_request(parse_body<nlohmann::ordered_json>(http_req), endpoint, prompt_context(engine)),
          std::move(in_flight), http_req, res);
    };
  };
  s.Post("/v1/responses", [this](const httplib::Request& http_req, httplib::Response& res) {
    auto in_flight = std::make_shared<InFlight>(in_flight_);  // counted in by the pre-routing handler
    const Engine& engine = *engine_.load();
    const nlohmann::ordered_json chat = responses_to_chat(parse_body<nlohmann::ordered_json>(http_req));
    serve_generation<ResponsesWriter>(parse_request(chat, Endpoint::CHAT, prompt_context(engine)),
                                      std::move(in_flight), http_req, res);
  });
  s.Post("/v1/messages", [this](const httplib::Request& http_req, httplib::Response& res) {
    auto in_flight = std::make_shared<InFlight>(in_flight_);  // counted in by the pre-routing handler
    const Engine& engine = *engine_.load();
    serve_generation<AnthropicWriter>(
        parse_anthropic_request(parse_body<nlohmann::ordered_json>(http_req), prompt_context(engine)),
        std::move(in_flight), http_req, res);
  });
  s.Post("/v1/messages/count_tokens", [this](const httplib::Request& req, httplib::Response& res) {
    const Engine& engine = *engine_.load();
    const int n = count_anthropic_tokens(parse_body<nlohmann::ordered_json>(req), prompt_context(engine));
    send_json(res, 200, {{"input_tokens", n}});
  });
  s.Post("/v1/chat/completions", generate(Endpoint::CHAT));
  s.Post("/v1/completions", generate(Endpoint::COMPLETION));
  native_routes();
  metadata_routes();
}

// llama-server's own routes: /completion (and its /completions alias), /infill, /props.
void HttpServer::native_routes() {
  httplib::Server& s = *http_;
  const auto native = [this](auto parse) {
    return [this, parse](const httplib::Request& http_req, httplib::Response& res) {
      auto in_flight = std::make_shared<InFlight>(in_flight_);  // counted in by the pre-routing handler
      const Engine& engine = *engine_.load();
      serve_generation<NativeWriter>(parse(parse_body<nlohmann::ordered_json>(http_req), prompt_context(engine), engine.n_slots()),
                                     std::move(in_flight), http_req, res);
    };
  };
  s.Post("/completion", native(parse_native_completion));
  s.Post("/completions", native(parse_native_completion));
  s.Post("/infill", native(parse_infill));
  slot_routes();
  lora_routes();
  s.Get("/props", [this](const httplib::Request&, httplib::Response& res) {
    const Engine& e = *engine_.load();
    const json settings = {{"n_ctx", e.n_ctx()}, {"temperature", 0.8}, {"top_k", 40}, {"top_p", 0.95}, {"min_p", 0.05},
                           {"n_predict", -1}, {"n_probs", 0}, {"samplers", {"penalties", "top_k", "top_p", "min_p", "temperature"}}};
    const std::string bos = tok_->bos() >= 0 ? tok_->token_to_piece(tok_->bos(), true) : "";
    const std::string eos = tok_->eos() >= 0 ? tok_->token_to_piece(tok_->eos(), true) : "";
    send_json(res, 200, {{"default_generation_settings", {{"n_ctx", e.n_ctx()}, {"params", settings}}},
                         {"total_slots", e.n_slots()}, {"model_alias", opt_.model_name}, {"model_path", opt_.model_path},
                         {"chat_template", chat_->source()}, {"bos_token", bos}, {"eos_token", eos},
                         {"modalities", {{"vision", vision_ != nullptr}, {"video", false}, {"audio", false}}}, {"is_sleeping", false},
                         {"endpoint_slots", true}, {"endpoint_props", true}, {"endpoint_metrics", true}, {"build_info", "hart"}});
  });
}

// GET /slots, and POST /slots/{id}?action=save|restore|erase as llama-server answers them (its
// messages where it has one; engine.h: what a slot is here).
void HttpServer::slot_routes() {
  httplib::Server& s = *http_;
  s.Get("/slots", [this](const httplib::Request&, httplib::Response& res) {
    const Engine& e = *engine_.load();
    json out = json::array();
    for (const Engine::SlotView& v : e.slots())
      out.push_back({{"id", v.id}, {"id_task", -1}, {"n_ctx", e.n_ctx()}, {"speculative", false}, {"is_processing", v.processing},
                     {"n_tokens", v.n_tokens}});
    send_json(res, 200, out);
  });
  s.Post(R"(/slots/([^/]*))", [this](const httplib::Request& req, httplib::Response& res) { slot_action(req, res); });
}

// GET /lora-adapters (each adapter's id, path and scale now) and POST /lora-adapters (new scales
// for every request without a "lora" of its own), as llama-server answers them.
void HttpServer::lora_routes() {
  httplib::Server& s = *http_;
  s.Get("/lora-adapters", [this](const httplib::Request&, httplib::Response& res) {
    const Model& m = engine_.load()->model();
    std::lock_guard lock(lora_mutex_);
    json out = json::array();
    for (size_t i = 0; i < m.loras.size(); i++) {
      const gguf::File& f = *m.loras[i]->file;
      out.push_back({{"id", i}, {"path", m.loras[i]->path}, {"scale", lora_[i]},
                     {"task_name", f.get_string("adapter.lora.task_name").value_or("")},
                     {"prompt_prefix", f.get_string("adapter.lora.prompt_prefix").value_or("")}});
    }
    send_json(res, 200, out);
  });
  s.Post("/lora-adapters", [this](const httplib::Request& req, httplib::Response& res) {
    const auto body = parse_body<nlohmann::ordered_json>(req);
    if (!body.is_array()) throw ApiError(400, "invalid_request_error", "Request body must be an array");
    std::vector<float> scales = lora_scales(body, engine_.load()->model().loras.size(), "lora-adapters");
    {
      std::lock_guard lock(lora_mutex_);
      lora_ = std::move(scales);
    }
    send_json(res, 200, {{"success", true}});
  });
}

void HttpServer::check_no_lora_applied() const {
  std::lock_guard lock(lora_mutex_);
  if (std::any_of(lora_.begin(), lora_.end(), [](float x) { return x != 0.0f; }))
    throw ApiError(501, "not_supported_error",
                   "this server computes embeddings and ranks without LoRA adapters, and its adapter scales are not all 0 "
                   "(POST /lora-adapters to set them to 0)");
}

void HttpServer::slot_action(const httplib::Request& req, httplib::Response& res) {
  using Ms = std::chrono::duration<double, std::milli>;
  if (opt_.slot_save_path.empty())
    throw ApiError(501, "not_supported_error", "This server does not support slots action. Start it with `--slot-save-path`");
  Engine& engine = *engine_.load();
  const std::string id_text = req.matches[1];
  int id = -1;
  if (!id_text.empty() && id_text.size() < 10 && std::all_of(id_text.begin(), id_text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    id = std::stoi(id_text);
  if (id < 0 || id >= engine.n_slots()) throw ApiError(400, "invalid_request_error", "Invalid slot ID");
  const std::string action = req.get_param_value("action");
  if (action != "save" && action != "restore" && action != "erase") throw ApiError(400, "invalid_request_error", "Invalid action");
  if (action == "erase") {
    send_json(res, 200, {{"id_slot", id}, {"n_erased", engine.erase_slot(id)}});
    return;
  }
  const json body = parse_body(req);
  if (!body.is_object() || !body.contains("filename") || !body["filename"].is_string())
    throw ApiError(400, "invalid_request_error", "'filename' must be a string", "filename");
  const std::string filename = body["filename"].get<std::string>();
  if (!valid_slot_filename(filename)) throw ApiError(400, "invalid_request_error", "Invalid filename", "filename");
  const std::filesystem::path path = std::filesystem::path(opt_.slot_save_path) / filename;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    engine.check_slot_persistence();
  } catch (const Error& e) {
    throw ApiError(501, "not_supported_error", e.what());
  }
  if (action == "save") {
    const SlotContents c = engine.save_slot(id);
    const std::vector<uint8_t> bytes = encode_slot_file(*slot_model_, c);
    // Written beside the file and renamed over it: a failed write leaves no partial file.
    const std::filesystem::path partial = path.string() + ".partial";
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    out.close();
    std::error_code ec;
    if (!out || (std::filesystem::rename(partial, path, ec), ec)) {
      std::filesystem::remove(partial, ec);
      throw ApiError(500, "server_error", "cannot write " + path.string());
    }
    send_json(res, 200, {{"id_slot", id}, {"filename", filename}, {"n_saved", c.tokens.size()}, {"n_written", bytes.size()},
                         {"timings", {{"save_ms", Ms(std::chrono::steady_clock::now() - t0).count()}}}});
    return;
  }
  // Restore: the file is read and checked here; only a whole file of this model reaches the pool.
  const auto refused = [](const std::string& why) { return ApiError(400, "invalid_request_error", "Unable to restore slot: " + why); };
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw refused("no file '" + filename + "' in the slot save path");
  // Nothing larger than the whole state pool and a context of tokens can be a slot of this server.
  if (size > engine.state_bytes() + size_t(engine.n_ctx()) * sizeof(int32_t) + 4096)
    throw refused("'" + filename + "' is larger than any slot of this server");
  std::vector<uint8_t> bytes(size);
  std::ifstream in(path, std::ios::binary);
  if (!in.read(reinterpret_cast<char*>(bytes.data()), std::streamsize(size))) throw refused("cannot read '" + filename + "'");
  int n_restored = 0;
  try {
    n_restored = engine.restore_slot(id, decode_slot_file(bytes, *slot_model_));
  } catch (const std::exception& e) {  // SlotFileError, or the engine's hart::Error
    throw refused(e.what());
  }
  send_json(res, 200, {{"id_slot", id}, {"filename", filename}, {"n_restored", n_restored}, {"n_read", bytes.size()},
                       {"timings", {{"restore_ms", Ms(std::chrono::steady_clock::now() - t0).count()}}}});
}

// What SGLang's Model Gateway (and its users) read of a worker: /model_info, /server_info and
// their older /get_ names, with SGLang's key names where a key means the same.
void HttpServer::metadata_routes() {
  httplib::Server& s = *http_;
  const auto model_info = [this](const httplib::Request&, httplib::Response& res) {
    const Model& m = engine_.load()->model();
    send_json(res, 200, {{"model_path", opt_.model_path}, {"tokenizer_path", opt_.model_path},
                         {"served_model_name", opt_.model_name}, {"is_generation", true},
                         {"model_type", m.hp.arch_name}, {"architectures", json::array({m.hp.arch_name})},
                         {"has_image_understanding", vision_ != nullptr}, {"has_audio_understanding", false}});
  };
  const auto server_info = [this](const httplib::Request&, httplib::Response& res) {
    const Engine& e = *engine_.load();
    send_json(res, 200, {{"version", "hart"}, {"model_path", opt_.model_path}, {"served_model_name", opt_.model_name},
                         {"host", opt_.host}, {"port", opt_.port}, {"context_length", e.n_ctx()},
                         {"max_total_num_tokens", e.kv_size()}, {"chunked_prefill_size", e.chunk_size()},
                         {"max_queued_requests", e.max_queue()}, {"tp_size", 1}, {"dp_size", 1},
                         {"draining", bool(draining_)}, {"in_flight_requests", int(in_flight_)}});
  };
  s.Get("/model_info", model_info);
  s.Get("/get_model_info", model_info);
  s.Get("/server_info", server_info);
  s.Get("/get_server_info", server_info);
}

}  // namespace hart::serve
