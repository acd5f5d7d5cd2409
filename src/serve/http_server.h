// The HTTP front of `hart serve` (cpp-httplib): the OpenAI routes (chat/completions,
// completions, embeddings, models), llama-server's /tokenize, /detokenize and /apply-template,
// /health and /metrics. It answers /health with 503 until attach() hands it a loaded model.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "chat/chat_formatter.h"
#include "serve/embeddings.h"
#include "serve/engine.h"
#include "serve/metrics.h"
#include "tokenizer/tokenizer.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}

namespace hart::serve {

struct ApiRequest;

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string api_key;     // empty: no authentication
  std::string model_name;  // reported by /v1/models and in responses
  int max_connections = 256;
};

class HttpServer {
 public:
  HttpServer(const ServerOptions& opt, Metrics& metrics);
  ~HttpServer();

  // Binds the socket; throws hart::Error when the address is taken or invalid.
  void bind();
  // Serves until stop(); call after bind().
  void run();
  void stop();
  // The model is loaded: start serving generation requests.
  void attach(Engine& engine, const Tokenizer& tok, ChatFormatter chat, Embedder& embedder);

 private:
  void routes();
  // Runs a parsed generation request, answering with Writer's response or its stream.
  template <class Writer>
  void serve_generation(ApiRequest req, const httplib::Request& http_req, httplib::Response& res);

  ServerOptions opt_;
  Metrics& metrics_;
  std::unique_ptr<httplib::Server> http_;
  std::atomic<Engine*> engine_{nullptr};
  const Tokenizer* tok_ = nullptr;
  Embedder* embedder_ = nullptr;
  std::optional<ChatFormatter> chat_;
};

}  // namespace hart::serve
