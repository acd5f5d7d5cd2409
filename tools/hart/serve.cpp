// hart serve: an OpenAI-, Anthropic- and llama-server-compatible HTTP server with continuous
// batching and a prefix cache.
// The socket is bound first, so /health answers 503 while the model loads. SIGTERM (or SIGINT)
// drains: new requests get 503 + Retry-After, the ones in flight finish, then the process exits
// 0; after --drain-timeout seconds, or at a second signal, what is left is cut off.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <thread>

#include "builtin_model.h"
#include "chat_setup.h"
#include "command.h"
#include "common/error.h"
#include "model_options.h"
#include "parse_args.h"
#include "serve/engine.h"
#include "serve/http_server.h"
#include "serve/image_input.h"
#include "spec_options.h"
#include "vision/multimodal.h"
#include "vision_options.h"

namespace hart::cli {
namespace {

// The model's own template by default; a file without one gets chatml, as llama-server does.
ChatFormatter serve_chat(const LoadedModel& lm, const ChatTemplateOptions& o) {
  ChatFormatter chat = choose_chat_formatter(lm.model->file.get(), *lm.tokenizer, o, ChatTemplate::CHATML);
  std::fprintf(stderr, "hart: chat template: %s\n",
               chat.is_jinja() ? (o.file.empty() ? "the model's (Jinja)" : o.file.c_str()) : chat.name().c_str());
  return chat;
}

// Refuses new requests and waits, up to timeout_s or a second signal, until none is in flight.
void drain(serve::HttpServer& server, const sigset_t& signals, double timeout_s) {
  server.drain();
  if (server.in_flight() == 0) return;
  std::fprintf(stderr, "hart: draining: %d requests in flight (at most %g s; a second signal stops now)\n",
               server.in_flight(), timeout_s);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  const timespec poll{0, 20'000'000};  // 20 ms
  while (server.in_flight() > 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      std::fprintf(stderr, "hart: drain timeout: %d requests cut off\n", server.in_flight());
      return;
    }
    if (sigtimedwait(&signals, nullptr, &poll) > 0) {
      std::fprintf(stderr, "hart: second signal: %d requests cut off\n", server.in_flight());
      return;
    }
  }
  std::fprintf(stderr, "hart: drained\n");
}

int cmd_serve(int argc, char** argv) {
  CLI::App app{"Serve a model over HTTP with the OpenAI, Anthropic and llama-server APIs", "hart serve"};
  ModelOptions mo;
  serve::ServerOptions so;
  serve::EngineOptions eo;
  ChatTemplateOptions cto;
  SpecOptions spo;
  VisionOptions vo;
  bool no_prefix_cache = false;
  double drain_timeout = 30;
  mo.add_to(app);
  app.add_option("--host", so.host, "address to listen on")->capture_default_str();
  app.add_option("--port", so.port, "port to listen on")->check(CLI::Range(1, 65535))->capture_default_str();
  app.add_option("--kv-size", eo.kv_size, "KV pool size in tokens, shared by all requests (default: 2 x context)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--chunk-size", eo.chunk_size, "most tokens per step (prompt chunks fill what decoding leaves)")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--max-queue", eo.max_queue, "waiting requests before new ones get 503")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--api-key", so.api_key, "require 'Authorization: Bearer KEY' (or 'x-api-key: KEY')");
  app.add_flag("--no-prefix-cache", no_prefix_cache, "do not reuse the KV of earlier prompts");
  eo.n_slots = 4;
  app.add_option("--parallel", eo.n_slots,
                 "llama-server's slots (-np; id_slot, /slots): each keeps its last request's tokens; requests run at once whatever their slots")
      ->check(CLI::Range(1, 4096))->capture_default_str();
  bool lora_init_without_apply = false;
  app.add_flag("--lora-init-without-apply", lora_init_without_apply,
               "load the LoRA adapters at scale 0 (set their scales later with POST /lora-adapters)");
  app.add_option("--slot-save-path", so.slot_save_path, "directory of slot files: POST /slots/{id}?action=save|restore (created if missing)");
  std::string pooling;
  bool reranking = false;
  app.add_option("--pooling", pooling, "pooling of the embeddings, over the model's: none, mean, cls, last, rank")
      ->check(CLI::IsMember({"none", "mean", "cls", "last", "rank"}));
  app.add_flag("--embedding,--embeddings", so.embeddings_only, "serve embeddings (and reranking) only: generation routes answer 501");
  app.add_flag("--reranking,--rerank", reranking, "serve /v1/rerank: --embedding --pooling rank");
  cto.add_to(app);
  spo.add_to(app);
  vo.add_to(app, /*with_images=*/false);
  app.add_option("--alias", so.model_name, "model name reported by the API (default: the file name)");
  app.add_option("--drain-timeout", drain_timeout,
                 "seconds a SIGTERM waits for the requests in flight before the server exits anyway")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  std::vector<std::pair<std::string, std::string>> aliases = kSpecShortAliases;
  aliases.emplace_back("-np", "--parallel");
  if (!parse_args(app, argc, argv, aliases)) return 0;
  if (!so.slot_save_path.empty()) {
    if (no_prefix_cache) throw Error("--slot-save-path saves and restores the prefix cache's KV: it cannot go with --no-prefix-cache");
    std::error_code ec;
    std::filesystem::create_directories(so.slot_save_path, ec);
    if (!std::filesystem::is_directory(so.slot_save_path))
      throw Error("--slot-save-path " + so.slot_save_path + ": not a directory and cannot be made one");
  }
  spo.enabled(eo.chunk_size);  // a verification batch is one step
  if (reranking) {
    so.embeddings_only = true;
    pooling = "rank";
  }
  if (so.model_name.empty())
    so.model_name = mo.model.empty() ? kBuiltinModelName : mo.model.substr(mo.model.find_last_of('/') + 1);
  so.model_path = mo.model.empty() ? std::string(kBuiltinModelName) + " (built-in)" : mo.model;
  so.lora = mo.session_params().lora;  // a malformed --lora-scaled fails here, before the server listens
  if (lora_init_without_apply) std::fill(so.lora.begin(), so.lora.end(), 0.0f);

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
    drain(server, signals, drain_timeout);
    server.stop();
  });
  std::fprintf(stderr, "hart: listening on http://%s:%d (loading the model)\n", so.host.c_str(), so.port);

  // The HTTP and signal threads end before this function does, also when the model fails to load.
  const auto end_threads = [&] {
    http.join();
    pthread_kill(waiter.native_handle(), SIGTERM);  // the server stopped otherwise: release the waiter
    waiter.join();
  };
  try {
    LoadedModel lm = load_model(mo);
    const SessionParams sp = mo.session_params();
    eo.n_ctx = sp.n_ctx;
    eo.cache_type = sp.cache_type;
    eo.prefix_cache = !no_prefix_cache;
    // Every request may ask for ngram-simple; the other types need what these flags load.
    const Speculation speculation = make_speculation(spo, mo, lm, nullptr);
    eo.speculation = speculation.factory.get();
    serve::Engine engine(*lm.model, *lm.tokenizer, eo, mo.backends(), metrics);
    serve::Embedder embedder(*lm.model, mo.backends(), engine.n_ctx(),
                             pooling.empty() ? std::nullopt : serve::pooling_from_name(pooling));
    // Images are encoded on the CPU, in the HTTP threads (one request's at a time), beside the
    // engine's backends (a device is the engine's alone).
    std::unique_ptr<vision::ClipModel> clip;
    std::unique_ptr<serve::ImageEncoder> images;
    if (!vo.mmproj.empty()) {
      clip = vision::ClipModel::open(vo.mmproj);
      vision::check_pair(*clip, *lm.model);
      images = std::make_unique<serve::ImageEncoder>(*clip, BackendSet({"cpu"}, mo.threads, mo.perf_log));
    }
    server.attach(engine, *lm.tokenizer, serve_chat(lm, cto), embedder, images.get());
    std::fprintf(stderr, "hart: ready: context %d, KV pool %d tokens, prefix cache %s%s\n", engine.n_ctx(),
                 engine.kv_size(), no_prefix_cache ? "off" : "on", images ? ", images (--mmproj)" : "");
    end_threads();  // when a signal has stopped the server
  } catch (...) {
    server.stop();
    end_threads();
    throw;
  }
  return 0;
}

}  // namespace

HART_COMMAND(serve, "serve a model over HTTP with the OpenAI, Anthropic and llama-server APIs", cmd_serve);

}  // namespace hart::cli
