// The HTTP front of `hart serve` (cpp-httplib): the OpenAI routes (chat/completions,
// completions, responses, embeddings, models), Anthropic's /v1/messages, llama-server's
// /completion, /infill, /props, /tokenize, /detokenize and /apply-template, /health, /metrics and the metadata routes routers probe (/server_info,
// /model_info and SGLang's /get_ names for them), embeddings and llama-server's /rerank, /slots
// and slot save / restore / erase.
// /health is a router's readiness check: 200 only while the model is loaded, the queue takes
// work and the server is not draining; 503 with the reason otherwise. drain() starts a graceful
// shutdown: from then on every request but /health, /metrics and the metadata is refused with
// 503 and Retry-After (a router retries it on another replica), while the requests already in
// flight, streams included, run to their end; in_flight() says how many are left.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "chat/chat_formatter.h"
#include "serve/embeddings.h"
#include "serve/engine.h"
#include "serve/metrics.h"
#include "serve/openai_api.h"
#include "serve/slot_file.h"
#include "tokenizer/tokenizer.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}

namespace hart::serve {

struct ApiRequest;
class InFlight;

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string api_key;     // empty: no authentication
  std::string model_name;  // reported by /v1/models and in responses
  std::string model_path;  // reported by /model_info and /server_info
  int max_connections = 256;
  bool embeddings_only = false;  // --embedding: generation routes answer 501
  // --slot-save-path: the directory of slot files (POST /slots/{id}?action=save|restore); empty:
  // those actions answer 501, as llama-server's do without it.
  std::string slot_save_path;
  // The scale of each LoRA adapter of the model at start (--lora, --lora-scaled; 0 each with
  // --lora-init-without-apply), which POST /lora-adapters changes and a request's "lora" overrides.
  std::vector<float> lora;
};

class HttpServer {
 public:
  HttpServer(const ServerOptions& opt, Metrics& metrics);
  ~HttpServer();

  // Binds the socket; throws hart::Error when the address is taken or invalid.
  void bind();
  // Serves until stop(); call after bind().
  void run();
  // Ends run(), also one called later or not yet started.
  void stop();
  // The model is loaded: start serving generation requests. `vision`: --mmproj's encoder, for
  // requests with images (nullptr: they are refused).
  void attach(Engine& engine, const Tokenizer& tok, ChatFormatter chat, Embedder& embedder, ImageEncoder* vision = nullptr);
  // Refuse new requests from now on; the ones in flight go on.
  void drain() { draining_ = true; }
  // Requests being answered (a stream until its last byte is written or its client is gone).
  int in_flight() const { return in_flight_; }

 private:
  void routes();
  void metadata_routes();
  // Runs a parsed generation request, answering with Writer's response or its stream; the
  // request counts as in flight until then.
  template <class Writer, class Request>
  void serve_generation(Request req, std::shared_ptr<InFlight> in_flight, const httplib::Request& http_req,
                        httplib::Response& res);
  void native_routes();
  void slot_routes();
  void slot_action(const httplib::Request& req, httplib::Response& res);
  void lora_routes();
  // Embeddings and ranking run without adapters: refused while the server's scales apply any.
  void check_no_lora_applied() const;
  // What a request is parsed against: the tokenizer, chat template, context, speculation.
  PromptContext prompt_context(const Engine& engine) const;

  ServerOptions opt_;
  Metrics& metrics_;
  std::unique_ptr<httplib::Server> http_;
  std::atomic<Engine*> engine_{nullptr};
  std::atomic<bool> draining_{false};
  std::atomic<int> in_flight_{0};
  std::atomic<bool> run_returned_{false};
  const Tokenizer* tok_ = nullptr;
  Embedder* embedder_ = nullptr;
  ImageEncoder* vision_ = nullptr;
  std::optional<ChatFormatter> chat_;
  std::optional<SlotModel> slot_model_;  // with --slot-save-path: what slot files are checked against
  mutable std::mutex lora_mutex_;        // guards lora_
  std::vector<float> lora_;              // the adapters' scales now (ServerOptions::lora, then POST /lora-adapters)
};

}  // namespace hart::serve
