// The C API's sessions: decoding one or several sequences, logits and embeddings, and the
// sequence operations (rollback, copy, state save and load).
#include <climits>
#include <cstring>

#include "lib/api.h"
#include "serve/embeddings.h"

using namespace hart;
using namespace hart::api;

namespace {

hart_session& session_of(const hart_session* s) {
  return live(const_cast<hart_session*>(s), Kind::SESSION, "session");
}

void need_seq(const hart_session& s, int32_t seq, const char* what) {
  need(seq >= 0 && seq < s.s.n_seq(), std::string(what) + " " + std::to_string(seq) + " is outside the session's " +
                                          std::to_string(s.s.n_seq()) + " sequences");
}

// Refuses inputs that do not fit their sequences with HART_ERR_CONTEXT_FULL (the session would
// throw hart::Error for them too, but the caller should tell a full context from other errors).
void need_room(const hart_session& s, const hart_seq_input& in) {
  const int past = s.s.n_past(in.seq);
  if (int64_t(past) + in.n_tokens > s.s.n_ctx())
    fail(HART_ERR_CONTEXT_FULL, "sequence " + std::to_string(in.seq) + " holds " + std::to_string(past) + " of " +
                                    std::to_string(s.s.n_ctx()) + " positions: " + std::to_string(in.n_tokens) +
                                    " more do not fit");
}

int decode(hart_session& h, std::span<const hart_seq_input> inputs) {
  std::vector<SeqTokens> in;
  in.reserve(inputs.size());
  for (const hart_seq_input& i : inputs) {
    need_seq(h, i.seq, "sequence");
    need(i.n_tokens > 0, "an input of sequence " + std::to_string(i.seq) + " has " + std::to_string(i.n_tokens) + " tokens");
    need(i.tokens != nullptr, "an input's tokens are NULL");
    const auto mode = enum_bits(i.logits);
    need(mode == HART_LOGITS_LAST || mode == HART_LOGITS_ALL || mode == HART_LOGITS_NONE,
         "an input's logits mode " + std::to_string(mode) + " is not a hart_logits_mode");
    need_room(h, i);
    in.push_back({i.seq, std::span(i.tokens, size_t(i.n_tokens)),
                  mode == HART_LOGITS_ALL ? Logits::ALL : mode == HART_LOGITS_LAST ? Logits::LAST : Logits::NONE});
  }
  h.last_logits = nullptr;
  h.n_inputs = 0;
  try {
    h.s.decode_seqs(in);
  } catch (const Error& e) {  // a token outside the vocabulary, a sequence given twice
    fail(HART_ERR_INVALID_ARGUMENT, e.what());
  }
  h.n_inputs = in.size();
  const size_t n_vocab = size_t(h.core->model().hp.n_vocab);
  for (size_t i = 0; i < in.size(); i++)
    if (!h.s.rows(i).empty()) h.last_logits = h.s.rows(i).data() + h.s.rows(i).size() - n_vocab;
  return HART_OK;
}

// Saving, loading and copying read the state in host memory: refused on a device.
void need_state_on_host(const hart_session& s) {
  if (!s.s.state_on_host())
    fail(HART_ERR_UNSUPPORTED, "a sequence's state can be saved, loaded or copied only in a session on the CPU alone "
                               "(a device keeps the state in its own memory)");
}

}  // namespace

hart_session& hart::api::changeable_session(hart_session* s) {
  hart_session& h = session_of(s);
  need(!h.generation, "the session is in use by an open generation (hart_generation_free it first)");
  return h;
}

extern "C" {

hart_session_params hart_session_default_params(void) {
  const SessionParams d;  // the engine's own defaults, not copies of them
  hart_session_params p;
  p.n_ctx = d.n_ctx;
  p.n_batch = d.n_batch;
  p.n_seq = d.n_seq;
  p.cache_type = api_cache_type(d.cache_type);
  p.n_threads = 0;
  return p;
}

hart_session* hart_session_new(hart_model* model, const hart_session_params* params) {
  return guarded<hart_session*>(nullptr, HART_ERR_FAILED, [&] {
    const auto& core = live(model, Kind::MODEL, "model").core;
    const hart_session_params p = params ? *params : hart_session_default_params();
    need(p.n_ctx >= 0, "n_ctx is negative (" + std::to_string(p.n_ctx) + ")");
    need(p.n_batch > 0, "n_batch must be positive, not " + std::to_string(p.n_batch));
    need(p.n_seq > 0 && p.n_seq <= 4096, "n_seq must be from 1 to 4096, not " + std::to_string(p.n_seq));
    need(p.n_threads >= 0 && p.n_threads <= 4096, "n_threads must be from 0 to 4096, not " + std::to_string(p.n_threads));
    need(int64_t(p.n_ctx) * p.n_seq <= INT32_MAX, "n_ctx x n_seq is over 2^31 positions");
    SessionParams sp;
    sp.n_ctx = p.n_ctx;
    sp.n_batch = p.n_batch;
    sp.n_seq = p.n_seq;
    sp.cache_type = cache_type_of(p.cache_type);
    return registered(new hart_session{core, Session(core->model(), sp, core->backends(p.n_threads))}, Kind::SESSION);
  });
}

void hart_session_free(hart_session* session) {
  free_handle(session, Kind::SESSION);
}

int32_t hart_session_n_ctx(const hart_session* session) {
  return guarded<int32_t>(HART_ERROR_COUNT, HART_ERR_FAILED, [&] { return session_of(session).s.n_ctx(); });
}

int32_t hart_session_n_seq(const hart_session* session) {
  return guarded<int32_t>(HART_ERROR_COUNT, HART_ERR_FAILED, [&] { return session_of(session).s.n_seq(); });
}

int hart_decode(hart_session* session, const int32_t* tokens, int32_t n_tokens) {
  return guarded_status(HART_ERR_FAILED, [&] {
    hart_session& h = changeable_session(session);
    need(n_tokens > 0, "n_tokens must be positive, not " + std::to_string(n_tokens));
    need(tokens != nullptr, "tokens is NULL");
    const hart_seq_input in{0, tokens, n_tokens, HART_LOGITS_LAST};
    return decode(h, {&in, 1});
  });
}

int hart_decode_batch(hart_session* session, const hart_seq_input* inputs, int32_t n_inputs) {
  return guarded_status(HART_ERR_FAILED, [&] {
    hart_session& h = changeable_session(session);
    need(n_inputs > 0, "n_inputs must be positive, not " + std::to_string(n_inputs));
    need(inputs != nullptr, "inputs is NULL");
    return decode(h, std::span(inputs, size_t(n_inputs)));
  });
}

const float* hart_logits(hart_session* session) {
  return guarded<const float*>(nullptr, HART_ERR_FAILED, [&] {
    hart_session& h = session_of(session);
    if (!h.last_logits) fail(HART_ERR_FAILED, "the last decode computed no logits");
    return h.last_logits;
  });
}

const float* hart_logits_ith(hart_session* session, int32_t input, int32_t row) {
  return guarded<const float*>(nullptr, HART_ERR_FAILED, [&] {
    hart_session& h = session_of(session);
    need(input >= 0 && size_t(input) < h.n_inputs,
         "input " + std::to_string(input) + " is not one of the last decode's " + std::to_string(h.n_inputs));
    const std::span<const float> rows = h.s.rows(size_t(input));
    const size_t n_vocab = size_t(h.core->model().hp.n_vocab);
    const auto n_rows = int32_t(rows.size() / n_vocab);
    if (row < 0) row += n_rows;
    need(row >= 0 && row < n_rows, "input " + std::to_string(input) + " has " + std::to_string(n_rows) +
                                       " logits rows, not a row " + std::to_string(row));
    return rows.data() + size_t(row) * n_vocab;
  });
}

int32_t hart_embed(hart_session* session, const int32_t* tokens, int32_t n_tokens, float* out, int32_t n_out) {
  return guarded<int32_t>(HART_ERROR_COUNT, HART_ERR_FAILED, [&]() -> int32_t {
    hart_session& h = changeable_session(session);
    need(n_tokens > 0, "n_tokens must be positive, not " + std::to_string(n_tokens));
    need(tokens != nullptr, "tokens is NULL");
    need_buffer(out, n_out, "out");
    const Model& m = h.core->model();
    const std::optional<serve::Pooling> pooling = serve::pooling_of(m);
    if (!pooling) fail(HART_ERR_UNSUPPORTED, "this model ranks (pooling type rank); it has no embeddings");
    if (n_out < m.hp.n_embd) {
      set_error(HART_ERR_BUFFER_TOO_SMALL, "an embedding has " + std::to_string(m.hp.n_embd) + " floats; out holds " +
                                               std::to_string(n_out));
      return -m.hp.n_embd;
    }
    h.s.truncate(0, 0);
    const hart_seq_input in{0, tokens, n_tokens, HART_LOGITS_ALL};
    need_room(h, in);
    h.last_logits = nullptr;
    h.n_inputs = 0;
    std::vector<float> v;
    try {
      v = serve::pool(h.s.hidden_states(std::span(tokens, size_t(n_tokens))), m.hp.n_embd, *pooling);
    } catch (...) {
      h.s.truncate(0, 0);
      throw;
    }
    h.s.truncate(0, 0);
    serve::normalize(v, 2);
    std::copy(v.begin(), v.end(), out);
    return int32_t(v.size());
  });
}

int32_t hart_seq_n_past(const hart_session* session, int32_t seq) {
  return guarded<int32_t>(HART_ERROR_COUNT, HART_ERR_FAILED, [&] {
    const hart_session& h = session_of(session);
    need_seq(h, seq, "sequence");
    return h.s.n_past(seq);
  });
}

int32_t hart_seq_truncate(hart_session* session, int32_t seq, int32_t n_keep) {
  return guarded<int32_t>(HART_ERROR_COUNT, HART_ERR_FAILED, [&] {
    hart_session& h = changeable_session(session);
    need_seq(h, seq, "sequence");
    need(n_keep >= 0, "n_keep is negative (" + std::to_string(n_keep) + ")");
    return h.s.truncate(seq, n_keep);
  });
}

int hart_seq_copy(hart_session* session, int32_t src, int32_t dst) {
  return guarded_status(HART_ERR_FAILED, [&] {
    hart_session& h = changeable_session(session);
    need_seq(h, src, "source sequence");
    need_seq(h, dst, "destination sequence");
    need_state_on_host(h);
    h.s.copy(src, dst);
    return HART_OK;
  });
}

int64_t hart_seq_state_save(const hart_session* session, int32_t seq, uint8_t* buf, int64_t len) {
  return guarded<int64_t>(HART_ERROR_COUNT, HART_ERR_FAILED, [&]() -> int64_t {
    const hart_session& h = session_of(session);
    need_seq(h, seq, "sequence");
    need_buffer(buf, len, "buf");
    need_state_on_host(h);
    std::vector<uint8_t> bytes;
    h.s.save(seq, bytes);
    const auto n = int64_t(bytes.size());
    if (n > len) {
      set_error(HART_ERR_BUFFER_TOO_SMALL, "the state has " + std::to_string(n) + " bytes; the buffer holds " +
                                               std::to_string(len));
      return -n;
    }
    std::memcpy(buf, bytes.data(), bytes.size());
    return n;
  });
}

int hart_seq_state_load(hart_session* session, int32_t seq, const uint8_t* buf, int64_t len) {
  return guarded_status(HART_ERR_INVALID_ARGUMENT, [&] {
    hart_session& h = changeable_session(session);
    need_seq(h, seq, "sequence");
    need_buffer(buf, len, "buf");
    need_state_on_host(h);
    h.s.load(seq, std::span(buf, size_t(len)));
    return HART_OK;
  });
}

int hart_session_cancel(hart_session* session) {
  return guarded_status(HART_ERR_FAILED, [&] {
    session_of(session).cancel = true;
    return HART_OK;
  });
}

}  // extern "C"
