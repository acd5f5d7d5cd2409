// The native half of the Node binding: hart's C API (hart.h) on libuv's worker threads, so
// loading, generation and requests never block the event loop. Generations and requests go a
// step a call (hart_generation_next, hart_request_next): each piece or chunk is computed when
// JavaScript asks for it, and freeing one stops it there. index.mjs builds the JavaScript
// API (promises, async iterables) over these functions.
#include <hart.h>
#include <napi.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

std::string last_error() { return std::string(hart_status_name(hart_last_status())) + ": " + hart_last_error(); }

// A model with the session generate / embed use, and the engine requests use (made on first use).
struct Handle {
  hart_model* model = nullptr;
  hart_session* session = nullptr;
  hart_engine* engine = nullptr;
  int32_t n_ctx = 0;
  std::string mmproj;  // the projector the engine loads when it is made (empty: none)
  ~Handle() {
    hart_engine_free(engine);
    hart_session_free(session);
    hart_model_free(model);
  }
};

Handle* handle_of(const Napi::Value& v) { return v.As<Napi::External<Handle>>().Data(); }

// Runs `work` on a worker thread; resolves with `done`'s value, or rejects with the library's message.
class Job : public Napi::AsyncWorker {
 public:
  using Work = std::function<bool()>;  // false: failed (hart_last_error says why, in that thread)
  using Done = std::function<Napi::Value(Napi::Env)>;
  Job(Napi::Env env, Work work, Done done)
      : Napi::AsyncWorker(env), deferred_(Napi::Promise::Deferred::New(env)), work_(std::move(work)),
        done_(std::move(done)) {}
  Napi::Promise promise() { return deferred_.Promise(); }
  void Execute() override {
    if (!work_()) SetError(last_error());
  }
  void OnOK() override { deferred_.Resolve(done_(Env())); }
  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  Work work_;
  Done done_;
};

// Queues a job and returns its promise.
template <class J>
Napi::Value queued(J* job) {
  Napi::Promise p = job->promise();
  job->Queue();
  return p;
}

// load(path, nCtx, nThreads) -> Promise<External>
Napi::Value Load(const Napi::CallbackInfo& info) {
  const std::string path = info[0].As<Napi::String>();
  const int32_t n_ctx = info[1].As<Napi::Number>().Int32Value(), n_threads = info[2].As<Napi::Number>().Int32Value();
  auto* h = new Handle;
  h->n_ctx = n_ctx;
  if (info[3].IsString()) h->mmproj = info[3].As<Napi::String>();
  auto* job = new Job(
      info.Env(),
      [=] {
        hart_model_params mp = hart_model_default_params();
        mp.n_threads = n_threads;
        h->model = hart_model_load(path.c_str(), &mp);
        if (!h->model) return false;
        hart_session_params sp = hart_session_default_params();
        sp.n_ctx = n_ctx;
        sp.n_threads = n_threads;
        h->session = hart_session_new(h->model, &sp);
        return h->session != nullptr;
      },
      [=](Napi::Env env) -> Napi::Value {
        return Napi::External<Handle>::New(env, h, [](Napi::Env, Handle* p) { delete p; });
      });
  return queued(job);
}

// tokenize(h, text, addSpecial, parseSpecial) -> Promise<number[]>
Napi::Value Tokenize(const Napi::CallbackInfo& info) {
  Handle* h = handle_of(info[0]);
  const std::string text = info[1].As<Napi::String>();
  const bool add_special = info[2].ToBoolean(), parse_special = info[3].ToBoolean();
  auto tokens = std::make_shared<std::vector<int32_t>>();
  auto* job = new Job(
      info.Env(),
      [=] {
        const int32_t need = hart_tokenize(h->model, text.data(), int32_t(text.size()), nullptr, 0, add_special, parse_special);
        if (need == HART_ERROR_COUNT) return false;
        tokens->resize(size_t(need < 0 ? -need : need));
        return hart_tokenize(h->model, text.data(), int32_t(text.size()), tokens->data(), int32_t(tokens->size()),
                             add_special, parse_special) >= 0;
      },
      [=](Napi::Env env) -> Napi::Value {
        Napi::Array a = Napi::Array::New(env, tokens->size());
        for (size_t i = 0; i < tokens->size(); i++) a.Set(uint32_t(i), Napi::Number::New(env, (*tokens)[i]));
        return a;
      });
  return queued(job);
}

std::vector<int32_t> to_tokens(const Napi::Value& v) {
  const Napi::Array a = v.As<Napi::Array>();
  std::vector<int32_t> out(a.Length());
  for (uint32_t i = 0; i < a.Length(); i++) out[i] = a.Get(i).As<Napi::Number>().Int32Value();
  return out;
}

// detokenize(h, tokens) -> string (fast: no worker)
Napi::Value Detokenize(const Napi::CallbackInfo& info) {
  Handle* h = handle_of(info[0]);
  const std::vector<int32_t> tokens = to_tokens(info[1]);
  const int32_t need = hart_detokenize(h->model, tokens.data(), int32_t(tokens.size()), nullptr, 0, false);
  std::string text(size_t(need < 0 ? -need : 1), '\0');
  const int32_t n = need == HART_ERROR_COUNT ? need
                                             : hart_detokenize(h->model, tokens.data(), int32_t(tokens.size()), text.data(),
                                                               int32_t(text.size()), false);
  if (n < 0) {
    Napi::Error::New(info.Env(), last_error()).ThrowAsJavaScriptException();
    return info.Env().Undefined();
  }
  return Napi::String::New(info.Env(), text.data(), size_t(n));
}

float number_or(const Napi::Object& o, const char* key, float fallback) {
  return o.Has(key) && o.Get(key).IsNumber() ? o.Get(key).As<Napi::Number>().FloatValue() : fallback;
}

// An open generation and the sampler it owns; freed by generationFree or, failing that, the GC.
struct Gen {
  hart_sampler* sampler = nullptr;
  hart_generation* gen = nullptr;
  void free() {
    hart_generation_free(gen);  // before its sampler
    hart_sampler_free(sampler);
    gen = nullptr;
    sampler = nullptr;
  }
  ~Gen() { free(); }
};

// An open engine request; freed (cancelled if running) by requestFree or the GC.
struct Req {
  hart_request* request = nullptr;
  ~Req() { hart_request_free(request); }
};

template <class T>
Napi::Value external(Napi::Env env, T* p) {
  return Napi::External<T>::New(env, p, [](Napi::Env, T* q) { delete q; });
}

// A string, or null at the end.
Napi::Value text_or_null(Napi::Env env, const std::optional<std::string>& s) {
  return s ? Napi::Value(Napi::String::New(env, *s)) : env.Null();
}

// generationNew(h, tokens, options) -> Promise<External<Gen>>: the prompt computed on a worker.
Napi::Value GenerationNew(const Napi::CallbackInfo& info) {
  Handle* h = handle_of(info[0]);
  const std::vector<int32_t> prompt = to_tokens(info[1]);
  const Napi::Object o = info[2].As<Napi::Object>();
  hart_sampler_params sp = hart_sampler_default_params();
  sp.temperature = number_or(o, "temperature", sp.temperature);
  sp.top_k = int32_t(number_or(o, "topK", float(sp.top_k)));
  sp.top_p = number_or(o, "topP", sp.top_p);
  sp.min_p = number_or(o, "minP", sp.min_p);
  sp.repeat_penalty = number_or(o, "repeatPenalty", sp.repeat_penalty);
  if (o.Has("seed") && o.Get("seed").IsNumber()) sp.seed = uint64_t(o.Get("seed").As<Napi::Number>().Int64Value());
  auto schema = std::make_shared<std::string>(o.Has("jsonSchema") ? o.Get("jsonSchema").ToString().Utf8Value() : "");
  auto grammar = std::make_shared<std::string>(o.Has("grammar") ? o.Get("grammar").ToString().Utf8Value() : "");
  hart_generate_params gp = hart_generate_default_params();
  gp.max_tokens = int32_t(number_or(o, "maxTokens", float(gp.max_tokens)));
  auto g = std::make_shared<std::unique_ptr<Gen>>(new Gen);
  return queued(new Job(
      info.Env(),
      [=] {
        hart_sampler_params p = sp;
        p.json_schema = schema->empty() ? nullptr : schema->c_str();
        p.grammar = grammar->empty() ? nullptr : grammar->c_str();
        Gen& gen = **g;
        gen.sampler = hart_sampler_new(h->model, &p);
        if (!gen.sampler || hart_seq_truncate(h->session, 0, 0) == HART_ERROR_COUNT) return false;
        gen.gen = hart_generation_new(h->session, gen.sampler, prompt.data(), int32_t(prompt.size()), &gp);
        return gen.gen != nullptr;
      },
      [=](Napi::Env env) { return external(env, g->release()); }));
}

// generationNext(gen) -> Promise<string | null>: the next non-empty piece, computed on a worker
// (null once the generation has ended).
Napi::Value GenerationNext(const Napi::CallbackInfo& info) {
  Gen* g = info[0].As<Napi::External<Gen>>().Data();
  auto piece = std::make_shared<std::optional<std::string>>();
  return queued(new Job(
      info.Env(),
      [=] {
        const char* p = nullptr;
        int32_t n = 0;
        for (int got; (got = hart_generation_next(g->gen, nullptr, &p, &n)) != 0;) {
          if (got < 0) return false;
          if (n > 0) {
            *piece = std::string(p, size_t(n));
            return true;
          }
        }
        return true;
      },
      [=](Napi::Env env) { return text_or_null(env, *piece); }));
}

// generationFree(gen): nothing more is computed.
Napi::Value GenerationFree(const Napi::CallbackInfo& info) {
  info[0].As<Napi::External<Gen>>().Data()->free();
  return info.Env().Undefined();
}

// generationTokens(gen) -> number: tokens computed so far.
Napi::Value GenerationTokens(const Napi::CallbackInfo& info) {
  const Gen* g = info[0].As<Napi::External<Gen>>().Data();
  return Napi::Number::New(info.Env(), g->gen ? hart_generation_n_tokens(g->gen) : 0);
}

// requestSubmit(h, chat, bodyJson) -> Promise<External<Req>>
Napi::Value RequestSubmit(const Napi::CallbackInfo& info) {
  Handle* h = handle_of(info[0]);
  const bool chat = info[1].ToBoolean();
  const std::string body = info[2].As<Napi::String>();
  auto r = std::make_shared<std::unique_ptr<Req>>(new Req);
  return queued(new Job(
      info.Env(),
      [=] {
        if (!h->engine) {
          hart_engine_params ep = hart_engine_default_params();
          ep.n_ctx = h->n_ctx;
          h->engine = hart_engine_new(h->model, &ep);
          if (!h->engine) return false;
          if (!h->mmproj.empty() && !hart_engine_load_mmproj(h->engine, h->mmproj.c_str())) {
            hart_engine_free(h->engine);  // made again (and the projector loaded again) by the next request
            h->engine = nullptr;
            return false;
          }
        }
        (*r)->request = hart_engine_submit(h->engine, chat, body.c_str());
        return (*r)->request != nullptr;
      },
      [=](Napi::Env env) { return external(env, r->release()); }));
}

// requestNext(req) -> Promise<string | null>: the next chunk (or the response) as JSON text.
Napi::Value RequestNext(const Napi::CallbackInfo& info) {
  Req* r = info[0].As<Napi::External<Req>>().Data();
  auto out = std::make_shared<std::optional<std::string>>();
  return queued(new Job(
      info.Env(),
      [=] {
        const char* json = nullptr;
        const int got = hart_request_next(r->request, &json);
        if (got == 1) *out = json;
        return got >= 0;
      },
      [=](Napi::Env env) { return text_or_null(env, *out); }));
}

// requestFree(req): cancels it if it still runs.
Napi::Value RequestFree(const Napi::CallbackInfo& info) {
  Req* r = info[0].As<Napi::External<Req>>().Data();
  hart_request_free(r->request);
  r->request = nullptr;
  return info.Env().Undefined();
}

// embed(h, tokens) -> Promise<number[]>
Napi::Value Embed(const Napi::CallbackInfo& info) {
  Handle* h = handle_of(info[0]);
  const std::vector<int32_t> tokens = to_tokens(info[1]);
  auto out = std::make_shared<std::vector<float>>(size_t(hart_n_embd(h->model)));
  return queued(new Job(
      info.Env(),
      [=] {
        return hart_embed(h->session, tokens.data(), int32_t(tokens.size()), out->data(), int32_t(out->size())) >= 0;
      },
      [=](Napi::Env env) -> Napi::Value {
        Napi::Array a = Napi::Array::New(env, out->size());
        for (size_t i = 0; i < out->size(); i++) a.Set(uint32_t(i), Napi::Number::New(env, (*out)[i]));
        return a;
      }));
}

Napi::Value Version(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), hart_version()); }

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("load", Napi::Function::New(env, Load));
  exports.Set("tokenize", Napi::Function::New(env, Tokenize));
  exports.Set("detokenize", Napi::Function::New(env, Detokenize));
  exports.Set("generationNew", Napi::Function::New(env, GenerationNew));
  exports.Set("generationNext", Napi::Function::New(env, GenerationNext));
  exports.Set("generationTokens", Napi::Function::New(env, GenerationTokens));
  exports.Set("generationFree", Napi::Function::New(env, GenerationFree));
  exports.Set("requestSubmit", Napi::Function::New(env, RequestSubmit));
  exports.Set("requestNext", Napi::Function::New(env, RequestNext));
  exports.Set("requestFree", Napi::Function::New(env, RequestFree));
  exports.Set("embed", Napi::Function::New(env, Embed));
  exports.Set("version", Napi::Function::New(env, Version));
  return exports;
}

}  // namespace

NODE_API_MODULE(hart_node, Init)
