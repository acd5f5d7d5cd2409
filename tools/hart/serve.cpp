// hart serve: an OpenAI-compatible HTTP server with continuous batching and a prefix cache.
// The socket is bound first, so /health answers 503 while the model loads.
#include <csignal>
#include <cstdio>
#include <thread>

#include "command.h"
#include "common/error.h"
#include "model_options.h"
#include "serve/engine.h"
#include "serve/http_server.h"

namespace hart::cli {
namespace {

ChatTemplate serve_template(const Model& m, const std::string& name) {
  if (!name.empty()) return chat_template_from_name(name);
  if (const auto text = m.file->get_string("tokenizer.chat_template"))
    if (auto t = detect_chat_template(*text)) return *t;
  std::fprintf(stderr, "hart: the model has no chat template hart knows: chat requests use chatml\n");
  return ChatTemplate::CHATML;
}

int cmd_serve(int argc, char** argv) {
  CLI::App app{"Serve a model over HTTP with the OpenAI API (chat/completions, completions)", "hart serve"};
  ModelOptions mo;
  serve::ServerOptions so;
  serve::EngineOptions eo;
  std::string template_name;
  bool no_prefix_cache = false;
  mo.add_to(app);
  app.add_option("--host", so.host, "address to listen on")->capture_default_str();
  app.add_option("--port", so.port, "port to listen on")->check(CLI::Range(1, 65535))->capture_default_str();
  app.add_option("--kv-size", eo.kv_size, "KV pool size in tokens, shared by all requests (default: 2 x context)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--chunk-size", eo.chunk_size, "most tokens per step (prompt chunks fill what decoding leaves)")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--max-queue", eo.max_queue, "waiting requests before new ones get 503")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--api-key", so.api_key, "require 'Authorization: Bearer KEY'");
  app.add_flag("--no-prefix-cache", no_prefix_cache, "do not reuse the KV of earlier prompts");
  app.add_option("--chat-template", template_name, "template name, overriding the model's")
      ->check(CLI::IsMember(chat_template_names()));
  app.add_option("--alias", so.model_name, "model name reported by the API (default: the file name)");
  CLI11_PARSE(app, argc, argv);
  if (so.model_name.empty()) so.model_name = mo.model.substr(mo.model.find_last_of('/') + 1);

  // SIGINT / SIGTERM are handled by one thread that stops the server (no work in a signal handler).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  serve::Metrics metrics;
  serve::HttpServer server(so, metrics);
  server.bind();
  std::thread http([&] { server.run(); });
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    server.stop();
  });
  std::fprintf(stderr, "hart: listening on http://%s:%d (loading the model)\n", so.host.c_str(), so.port);

  LoadedModel lm = load_model(mo);
  const SessionParams sp = mo.session_params();
  eo.n_ctx = sp.n_ctx;
  eo.cache_type = sp.cache_type;
  eo.prefix_cache = !no_prefix_cache;
  serve::Engine engine(*lm.model, *lm.tokenizer, eo, mo.backends(), metrics);
  server.attach(engine, *lm.tokenizer, serve_template(*lm.model, template_name));
  std::fprintf(stderr, "hart: ready: context %d, KV pool %d tokens, prefix cache %s\n", engine.n_ctx(), engine.kv_size(),
               no_prefix_cache ? "off" : "on");
  http.join();
  pthread_kill(waiter.native_handle(), SIGTERM);  // server stopped otherwise: release the waiter
  waiter.join();
  return 0;
}

}  // namespace

HART_COMMAND(serve, "serve a model over HTTP with the OpenAI API", cmd_serve);

}  // namespace hart::cli
