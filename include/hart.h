/* hart.h: the C API of hart, a library for running GGUF language models.
 *
 * C11 and C++ compatible; no C++ type crosses it. Every object is an opaque handle made by a
 * *_new / *_load function and released by its *_free; every params struct has a
 * *_default_params() initializer, so a program sets only the fields it cares about.
 *
 * Errors: no exception and no abort() crosses this interface. A function that fails returns
 * NULL (handles, pointers), a negative hart_status (functions returning int), or HART_ERROR_COUNT
 * (functions returning a count); hart_last_error() and hart_last_status() then say why, for the
 * calling thread. A count that does not fit the caller's buffer is returned negated: the call
 * wrote nothing, and -(return value) is the size it needs.
 *
 * Handles are checked: NULL, a freed handle or a handle of another kind is refused with
 * HART_ERR_INVALID_ARGUMENT (unless its memory was reused by a new handle of the same kind).
 *
 * Threads: a model is read-only once loaded; functions taking a const hart_model* may be called
 * from any thread at once. A session, a sampler, a generation or a request is used by one thread
 * at a time, which need not be the same from call to call (sessions of one model may run in
 * different threads at once). An engine is safe from any thread. hart_session_cancel may be
 * called from any thread.
 *
 * Ownership: a session, sampler or engine keeps its model alive; hart_model_free may come first.
 * A generation uses its session and sampler, a request its engine: those are freed after it.
 * Strings returned as `char*` are the caller's to release with hart_string_free; `const`
 * pointers returned belong to the library and stay valid as long as the call documents.
 */
#ifndef HART_H
#define HART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The library is built with hidden visibility; these are the symbols it exports. */
#if defined(__GNUC__) || defined(__clang__)
#define HART_API __attribute__((visibility("default")))
#else
#define HART_API
#endif

/* The interface revision: changes whenever a signature or a struct's layout changes. */
#define HART_ABI_VERSION 1

/* hart_tokenize, hart_detokenize, ... return this when the call failed (not a size). */
#define HART_ERROR_COUNT INT32_MIN

/* No token: a callback's last call (the text held back until the end), or "none" ids. */
#define HART_TOKEN_NONE (-1)

#ifdef __cplusplus
extern "C" {
#endif

// ## Errors and versions

// What a call failed with. 0 is success; every failure is negative.
typedef enum hart_status {
  HART_OK = 0,
  HART_ERR_INVALID_ARGUMENT = -1, /* NULL, a freed handle, a negative size, a value out of range */
  HART_ERR_BUFFER_TOO_SMALL = -2, /* the output does not fit; the call's size says what is needed */
  HART_ERR_BAD_FILE = -3,         /* a model file that cannot be read or is not a model hart runs */
  HART_ERR_UNSUPPORTED = -4,      /* a request this model, build or device cannot honour exactly */
  HART_ERR_CONTEXT_FULL = -5,     /* the tokens do not fit the sequence's context */
  HART_ERR_OUT_OF_MEMORY = -6,
  HART_ERR_CANCELLED = -7,        /* hart_session_cancel or a callback stopped it */
  HART_ERR_FAILED = -8,           /* the request was valid but could not be done (the message says why) */
  HART_ERR_INTERNAL = -9          /* a bug in hart: please report the message */
} hart_status;

// The library's version, "MAJOR.MINOR.PATCH". Thread-safe; the string is static.
HART_API const char* hart_version(void);

// The HART_ABI_VERSION the library was built with: a program compares it with its header's.
HART_API int32_t hart_abi_version(void);

// The message of the last failed call in this thread ("" when none failed). The string stays
// valid until this thread's next failing call.
HART_API const char* hart_last_error(void);

// The status of the last failed call in this thread (HART_OK when none failed).
HART_API hart_status hart_last_status(void);

// A status's name, e.g. "HART_ERR_CONTEXT_FULL". Thread-safe; the string is static.
HART_API const char* hart_status_name(hart_status status);

// Releases a string the library returned as `char*`. NULL is ignored.
HART_API void hart_string_free(char* s);

// ## Models

typedef struct hart_model hart_model;

typedef struct hart_model_params {
  int32_t n_threads;   /* CPU threads of the sessions made from the model; 0: every core */
  uint64_t cpu_mask;   /* pin those threads to these CPUs (bit i: CPU i); 0: no pinning */
  bool use_mmap;       /* map the weights instead of reading them into memory */
  const char* devices; /* backends in order of preference, e.g. "et,cpu"; NULL or "": the CPU */
} hart_model_params;

// n_threads 0, cpu_mask 0, use_mmap false, devices NULL. Thread-safe.
HART_API hart_model_params hart_model_default_params(void);

// Opens a GGUF file (or "synthetic:NAME:TYPE": random weights with a real model's shapes) and
// checks it: every tensor against its architecture, the vocabulary against the embedding, the
// device names and CPU mask. params may be NULL (the defaults). NULL on error
// (HART_ERR_BAD_FILE for a missing, corrupt or unsupported file). Thread-safe.
HART_API hart_model* hart_model_load(const char* path, const hart_model_params* params);

// Releases the caller's handle; the model stays loaded while a session, sampler or engine made
// from it is open. NULL is ignored. Not to be called while another thread uses the handle.
HART_API void hart_model_free(hart_model* model);

// The vocabulary size (the length of a logits row), or HART_ERROR_COUNT.
HART_API int32_t hart_n_vocab(const hart_model* model);
// The width of the hidden state (the length of an embedding), or HART_ERROR_COUNT.
HART_API int32_t hart_n_embd(const hart_model* model);
// The number of layers, or HART_ERROR_COUNT.
HART_API int32_t hart_n_layer(const hart_model* model);
// The context length the model was trained with, or HART_ERROR_COUNT.
HART_API int32_t hart_n_ctx_train(const hart_model* model);

// The value of a GGUF metadata key as text (a string as it is, a number in decimal, true /
// false, an array as JSON) into buf with a NUL. Returns its length in bytes, -(length + 1) when
// len is too small (nothing written), HART_ERROR_COUNT when the key is absent or on error.
HART_API int32_t hart_model_meta(const hart_model* model, const char* key, char* buf, int32_t len);

// Special tokens: the id, or HART_TOKEN_NONE when the vocabulary has none (or on error).
HART_API int32_t hart_token_bos(const hart_model* model);
HART_API int32_t hart_token_eos(const hart_model* model);
HART_API int32_t hart_token_eot(const hart_model* model);
// True for a token that ends generation (EOS, EOT, <|im_end|>, ...); false otherwise or on error.
HART_API bool hart_token_is_eog(const hart_model* model, int32_t token);
// True for a control token, whose text is rendered only on request; false otherwise or on error.
HART_API bool hart_token_is_control(const hart_model* model, int32_t token);

// ## Tokens and text

// Splits text_len bytes of text (text_len < 0: up to its NUL) into tokens, as `hart tokenize`
// does. add_special: BOS / EOS as the model's file says. parse_special: control-token texts
// ("<|im_start|>") become those tokens. Returns the count written; -(count needed) when
// n_tokens_max is too small (nothing written); HART_ERROR_COUNT on error.
HART_API int32_t hart_tokenize(const hart_model* model, const char* text, int32_t text_len, int32_t* tokens,
                               int32_t n_tokens_max, bool add_special, bool parse_special);

// The text of one token (control tokens: ""), without a NUL. Returns its length in bytes,
// -(length) when len is too small (nothing written), HART_ERROR_COUNT on error.
HART_API int32_t hart_token_to_piece(const hart_model* model, int32_t token, char* buf, int32_t len);

// The text of n_tokens tokens, byte-exact (a UTF-8 character split over byte tokens comes back
// whole), with a NUL. special: render control tokens' text. Returns its length in bytes,
// -(length + 1) when len is too small (nothing written), HART_ERROR_COUNT on error.
HART_API int32_t hart_detokenize(const hart_model* model, const int32_t* tokens, int32_t n_tokens, char* buf,
                                 int32_t len, bool special);

// ## Sessions

typedef struct hart_session hart_session;

typedef enum hart_cache_type { HART_CACHE_F16 = 0, HART_CACHE_F32 = 1 } hart_cache_type;

typedef struct hart_session_params {
  int32_t n_ctx;              /* positions a sequence may hold; 0: the model's, at most 4096 */
  int32_t n_batch;            /* most tokens one forward pass computes (longer input is split) */
  int32_t n_seq;              /* sequences, 0 .. n_seq - 1, each of up to n_ctx positions */
  hart_cache_type cache_type; /* the KV cache's element type */
  int32_t n_threads;          /* 0: the model's n_threads */
} hart_session_params;

// n_ctx 0, n_batch 512, n_seq 1, HART_CACHE_F16, n_threads 0. Thread-safe.
HART_API hart_session_params hart_session_default_params(void);

// A session over the model: the state (KV cache, recurrent state) of n_seq sequences and the
// backends that compute them. params may be NULL (the defaults). NULL on error.
HART_API hart_session* hart_session_new(hart_model* model, const hart_session_params* params);

// NULL is ignored. Not to be called while another thread uses the session.
HART_API void hart_session_free(hart_session* session);

// The session's n_ctx (positions per sequence) and n_seq, or HART_ERROR_COUNT.
HART_API int32_t hart_session_n_ctx(const hart_session* session);
HART_API int32_t hart_session_n_seq(const hart_session* session);

// Appends n_tokens tokens to sequence 0 and computes the logits of the last one (hart_logits).
// Returns HART_OK, or a negative status (HART_ERR_CONTEXT_FULL when they do not fit; the
// sequence is then unchanged).
HART_API int hart_decode(hart_session* session, const int32_t* tokens, int32_t n_tokens);

// Which logits a sequence's input asks for.
typedef enum hart_logits_mode { HART_LOGITS_LAST = 0, HART_LOGITS_ALL = 1, HART_LOGITS_NONE = 2 } hart_logits_mode;

// One sequence's new tokens in a batch of several.
typedef struct hart_seq_input {
  int32_t seq;            /* 0 .. n_seq - 1; each sequence at most once a batch */
  const int32_t* tokens;  /* appended at the sequence's next positions */
  int32_t n_tokens;       /* > 0 */
  hart_logits_mode logits;
} hart_seq_input;

// Appends each input's tokens to its sequence, computed together (one forward pass a step, at
// most n_batch tokens a step). Afterwards hart_logits_ith(session, i, row) reads input i's
// logits. Returns HART_OK or a negative status; on a refused input no sequence changes.
HART_API int hart_decode_batch(hart_session* session, const hart_seq_input* inputs, int32_t n_inputs);

// The n_vocab logits of the last token of the last decode call (for hart_decode_batch: of its
// last input that asked for logits). Valid until the session's next decode; NULL when that
// call computed none, or on error.
HART_API const float* hart_logits(hart_session* session);

// Row `row` (-1: the last) of input `input`'s logits in the last hart_decode_batch (n_vocab
// floats); NULL when it has no such row, or on error. Valid until the session's next decode.
HART_API const float* hart_logits_ith(hart_session* session, int32_t input, int32_t row);

// The embedding of a text's tokens: their last hidden states pooled as the GGUF says (mean for a
// decoder model), Euclidean-normalized, as `hart serve`'s /v1/embeddings gives it. Uses
// sequence 0, which it clears first and leaves empty. Returns n_embd (the floats written),
// -(n_embd) when n_out is too small, HART_ERROR_COUNT on error.
HART_API int32_t hart_embed(hart_session* session, const int32_t* tokens, int32_t n_tokens, float* out,
                            int32_t n_out);

// Positions sequence `seq` holds, or HART_ERROR_COUNT.
HART_API int32_t hart_seq_n_past(const hart_session* session, int32_t seq);

// Forgets a sequence's positions >= n_keep (rolls it back to n_keep; 0 clears it). Returns the
// positions kept: n_keep, or 0 when the model's state cannot go back there (a recurrent state,
// a sliding window that moved on: then the sequence is cleared); HART_ERROR_COUNT on error.
HART_API int32_t hart_seq_truncate(hart_session* session, int32_t seq, int32_t n_keep);

// Makes sequence dst a copy of sequence src (its positions and state; dst's own are dropped).
// HART_OK or a negative status (HART_ERR_UNSUPPORTED in a session on a device).
HART_API int hart_seq_copy(hart_session* session, int32_t src, int32_t dst);

// Writes sequence seq's state (its K/V rows, recurrent state and position count) into buf.
// Returns the bytes written, -(bytes needed) when len is too small (buf may be NULL then), or
// HART_ERROR_COUNT on error (HART_ERR_UNSUPPORTED unless the session runs on the CPU alone).
HART_API int64_t hart_seq_state_save(const hart_session* session, int32_t seq, uint8_t* buf, int64_t len);

// Replaces sequence seq by a state hart_seq_state_save wrote (in any session of the same model
// and cache type). HART_OK, or a negative status (bytes of another model, cut short or
// corrupt: HART_ERR_INVALID_ARGUMENT, and the sequence is left empty).
HART_API int hart_seq_state_load(hart_session* session, int32_t seq, const uint8_t* buf, int64_t len);

// Asks a running hart_generate, or the open hart_generation, on this session to stop at its
// next token (it returns HART_ERR_CANCELLED). Safe from any thread; the request is cleared when
// hart_generate or hart_generation_new starts.
HART_API int hart_session_cancel(hart_session* session);

// ## Sampling

typedef struct hart_sampler hart_sampler;

// The chain runs in llama.cpp's order: penalties, grammar, top-k, top-p, min-p, temperature.
typedef struct hart_sampler_params {
  float temperature;       /* <= 0: greedy (argmax) */
  int32_t top_k;           /* <= 0: off */
  float top_p;             /* 1: off */
  float min_p;             /* 0: off */
  float repeat_penalty;    /* 1: off */
  int32_t repeat_last_n;   /* tokens the penalties look back over; -1: all */
  float frequency_penalty; /* 0: off */
  float presence_penalty;  /* 0: off */
  uint64_t seed;           /* 0xFFFFFFFF: a random one */
  const char* grammar;     /* GBNF the output must match, or NULL */
  const char* json_schema; /* a JSON schema (text) the output must match, or NULL; not with grammar */
} hart_sampler_params;

// llama.cpp's defaults: temperature 0.8, top-k 40, top-p 0.95, min-p 0.05, penalties off over
// 64 tokens, a random seed, no grammar. Thread-safe.
HART_API hart_sampler_params hart_sampler_default_params(void);

// NULL on error (HART_ERR_INVALID_ARGUMENT for a bad value, grammar or schema).
HART_API hart_sampler* hart_sampler_new(const hart_model* model, const hart_sampler_params* params);
HART_API void hart_sampler_free(hart_sampler* sampler);

// Picks a token from a row of n_logits (= n_vocab) logits; does not accept it. Returns the
// token, or a negative status (HART_ERR_FAILED when the grammar allows no token).
HART_API int32_t hart_sampler_sample(hart_sampler* sampler, const float* logits, int32_t n_logits);

// Records a token of the sequence (prompt or generated) for the penalties and the grammar.
// HART_OK, or HART_ERR_INVALID_ARGUMENT for a token the grammar does not allow.
HART_API int hart_sampler_accept(hart_sampler* sampler, int32_t token);

// True once the grammar has matched and nothing but the end can follow (false without one).
HART_API bool hart_sampler_done(const hart_sampler* sampler);

// Forgets accepted tokens, restarts the grammar and the random numbers from the seed.
HART_API int hart_sampler_reset(hart_sampler* sampler);

// ## Generation

typedef struct hart_generate_params {
  int32_t max_tokens;       /* tokens to generate; < 0: until an end-of-generation token or a full context */
  bool ignore_eos;          /* go on past end-of-generation tokens */
  const char* const* stops; /* n_stops strings that end the text (not included), or NULL */
  int32_t n_stops;
} hart_generate_params;

// max_tokens 128, ignore_eos false, no stop strings. Thread-safe.
HART_API hart_generate_params hart_generate_default_params(void);

// A generation the caller drives a token at a time (what an iterator or a stream in another
// language wraps): the loop of hart_generate, one step a call, so the caller takes each piece of
// text as soon as it is computed and stops it by no longer asking (hart_generation_free).
typedef struct hart_generation hart_generation;

// Appends the prompt to sequence 0 (which may hold a conversation already) and computes it, as
// hart_generate does; the tokens then come from hart_generation_next. The generation uses the
// session and the sampler (it does not own them: free it first) and holds them while it is
// open: another generation on either, or a call that changes the session (decode, embed,
// truncate, copy, state load), is refused with HART_ERR_INVALID_ARGUMENT until it is freed.
// Clears a pending hart_session_cancel. params may be NULL (the defaults). NULL on error.
HART_API hart_generation* hart_generation_new(hart_session* session, hart_sampler* sampler, const int32_t* prompt,
                                              int32_t n_prompt, const hart_generate_params* params);

// Generates the next token: decodes the one before, samples this one. Returns 1 with *token the
// token and *piece / *piece_len the text that became final with it (possibly empty: an
// incomplete UTF-8 character or a possible stop string is held back; not NUL-terminated); then,
// once the generation has ended (max_tokens, an end-of-generation token, a stop string, a
// finished grammar, a full context), 1 once more with *token HART_TOKEN_NONE and the text that
// was held back; then 0 (nothing written) on every later call. A negative status on error
// (HART_ERR_CANCELLED after hart_session_cancel), after which the generation has ended too.
// *piece belongs to the generation and stays valid until its next call or its free. Any of the
// three out-pointers may be NULL. One thread at a time; the calls may come from different threads.
HART_API int hart_generation_next(hart_generation* gen, int32_t* token, const char** piece, int32_t* piece_len);

// Tokens generated so far (the end-of-generation token not counted), or HART_ERROR_COUNT. The
// session holds the prompt and all of them but the last, which hart_generation_next decodes
// only when it is asked for the next token.
HART_API int32_t hart_generation_n_tokens(const hart_generation* gen);

// Ends the generation (where it is: nothing more is computed) and frees it; the session keeps
// what was decoded. NULL is ignored. Not to be called while another thread is in a call on it.
HART_API void hart_generation_free(hart_generation* gen);

// Called with each generated token and the text that became final with it, and once at the end
// with HART_TOKEN_NONE and what was held back: hart_generation_next's events. Return false to
// stop generating.
typedef bool (*hart_token_callback)(int32_t token, const char* piece, int32_t piece_len, void* user_data);

// Runs a whole generation (hart_generation_new, then hart_generation_next to its end) as `hart
// run` does, calling on_token (may be NULL) with each event. Returns the number of tokens
// generated, or a negative status (HART_ERR_CANCELLED after hart_session_cancel; a callback
// returning false is a normal end, with no HART_TOKEN_NONE call).
HART_API int32_t hart_generate(hart_session* session, hart_sampler* sampler, const int32_t* prompt, int32_t n_prompt,
                               const hart_generate_params* params, hart_token_callback on_token, void* user_data);

// ## Chat

typedef struct hart_chat_message {
  const char* role;    /* "system", "user", "assistant", "tool" */
  const char* content;
} hart_chat_message;

// Renders a conversation into prompt text with the model's own chat template (the GGUF's
// Jinja tokenizer.chat_template; chatml for a file without one), as `hart serve` does, into buf
// with a NUL. add_generation_prompt: end with the assistant's turn opened. Returns the length
// in bytes, -(length + 1) when len is too small (nothing written), HART_ERROR_COUNT on error.
HART_API int32_t hart_chat_apply(const hart_model* model, const hart_chat_message* messages, int32_t n_messages,
                                 bool add_generation_prompt, char* buf, int32_t len);

// As hart_chat_apply (with the generation prompt), for a request in JSON: llama-server's
// /apply-template body, "messages" and optionally "tools" and "chat_template_kwargs". Returns
// the prompt text (free it with hart_string_free), or NULL on error.
HART_API char* hart_chat_apply_json(const hart_model* model, const char* request_json);

// ## Engine: OpenAI requests in process

typedef struct hart_engine hart_engine;

typedef struct hart_engine_params {
  int32_t n_ctx;        /* the longest sequence; 0: the model's, at most 4096 */
  int32_t kv_size;      /* KV slots shared by all requests; 0: 2 x n_ctx */
  int32_t chunk_size;   /* most tokens a step */
  int32_t max_queue;    /* waiting requests before new ones are refused */
  bool prefix_cache;    /* reuse the KV of earlier prompts */
  hart_cache_type cache_type;
} hart_engine_params;

// hart serve's defaults: n_ctx 0, kv_size 0, chunk_size 256, max_queue 64, prefix cache on, F16.
HART_API hart_engine_params hart_engine_default_params(void);

// The continuous-batching engine `hart serve` runs (its own thread), with the model's chat
// template. NULL on error.
HART_API hart_engine* hart_engine_new(hart_model* model, const hart_engine_params* params);
// Stops the engine's thread. NULL is ignored. Requests still open on it fail from then on
// (HART_ERR_INVALID_ARGUMENT); not to be called while another thread is in a call on one.
HART_API void hart_engine_free(hart_engine* engine);
// Gives the engine the model's multimodal projector (llama.cpp's mmproj GGUF, as `hart serve
// --mmproj`): from then on chat requests take images as image_url content parts whose url is a
// data: URL ("data:image/png;base64,...") or bare base64, encoded on the CPU. False on error (a
// file that is not a projector, or one for another model's width: HART_ERR_INVALID_ARGUMENT).
// Not to be called while a request runs.
HART_API bool hart_engine_load_mmproj(hart_engine* engine, const char* path);

// A request the caller reads a chunk at a time (what an iterator or a stream in another
// language wraps).
typedef struct hart_request hart_request;

// Submits one request given as the JSON body of POST /v1/chat/completions (chat true) or
// /v1/completions (chat false), with every field `hart serve` takes (tools, response_format,
// n, stop, seed, logprobs, "stream", ...); the engine starts on it at once, batched with the
// others. NULL on error (a bad request: HART_ERR_INVALID_ARGUMENT, with the server's message).
// Safe from any thread. The engine must outlive the request.
HART_API hart_request* hart_engine_submit(hart_engine* engine, bool chat, const char* body_json);

// Waits for the request's next output: with "stream": true each chunk object (JSON text, as
// `hart serve` sends it after "data: "), as soon as it is computed; otherwise the one response
// object. Returns 1 with *json set (NUL-terminated; it belongs to the request and stays valid
// until its next call or its free), 0 once everything was read (*json untouched), or a negative
// status. One thread at a time.
HART_API int hart_request_next(hart_request* request, const char** json);

// Cancels the request if it is still running (the engine frees its slot at its next step) and
// frees it. NULL is ignored. Not to be called while another thread is in a call on it.
HART_API void hart_request_free(hart_request* request);

// Called with each chunk of a streamed response (its JSON text, NUL-terminated). Return false
// to cancel the request.
typedef bool (*hart_chunk_callback)(const char* chunk_json, void* user_data);

// A whole request: hart_engine_submit, then hart_request_next to the end (images as image_url
// parts after hart_engine_load_mmproj). With "stream": true,
// each chunk goes to on_chunk (which must not be NULL) and the result is the JSON "null";
// otherwise the result is the response object's JSON. Returns a string to free with
// hart_string_free, or NULL on error (a bad request: HART_ERR_INVALID_ARGUMENT, with the
// server's message; HART_ERR_CANCELLED when on_chunk returned false). Safe from any thread:
// requests from several threads are batched together.
HART_API char* hart_engine_request(hart_engine* engine, bool chat, const char* body_json, hart_chunk_callback on_chunk,
                                   void* user_data);

#ifdef __cplusplus
}
#endif

#endif /* HART_H */
