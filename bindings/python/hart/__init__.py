"""hart from Python: GGUF language models in process, over the C API (libhart.so) with ctypes.

    import hart
    m = hart.Model("stories260K.gguf", n_ctx=256)
    for piece in m.generate("Once upon a time", max_tokens=32, temperature=0):
        print(piece, end="")

The shape follows llama-cpp-python: tokenize / detokenize, a streaming generate, and
create_chat_completion / create_completion returning the OpenAI response dicts (run by the same
engine as `hart serve`, so tools, response_format and the rest behave as over HTTP)."""
import ctypes
import json

from ._lib import ERROR_COUNT, ChunkCallback, lib

__all__ = ["HartError", "Model", "version"]


class HartError(Exception):
    """A failed call: `status` is the hart_status name, the message the library's."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


def _error():
    return HartError(lib.hart_last_error().decode("utf-8", "replace"),
                     lib.hart_status_name(lib.hart_last_status()).decode())


def _check(ok):
    if not ok:
        raise _error()


def _owned_string(p):
    """A char* the library returned: its text, the memory released."""
    if not p:
        raise _error()
    try:
        return ctypes.string_at(p).decode("utf-8")
    finally:
        lib.hart_string_free(p)


def version():
    return lib.hart_version().decode()


class Model:
    """A loaded model with one session (sequence 0) for generate / embed, and an engine made on
    the first chat or completion request. mmproj: the model's multimodal projector (llama.cpp's
    mmproj GGUF), with which chat requests take images as image_url parts (data: URLs or bare
    base64). Not thread-safe; close() (or `with`) frees it."""

    def __init__(self, path, n_ctx=0, n_threads=0, n_batch=512, use_mmap=False, devices=None, mmproj=None):
        mp = lib.hart_model_default_params()
        mp.n_threads = n_threads
        mp.use_mmap = use_mmap
        mp.devices = devices.encode() if devices else None
        self._model = lib.hart_model_load(str(path).encode(), ctypes.byref(mp))
        _check(self._model)
        sp = lib.hart_session_default_params()
        sp.n_ctx, sp.n_batch, sp.n_threads = n_ctx, n_batch, n_threads
        self._session = lib.hart_session_new(self._model, ctypes.byref(sp))
        if not self._session:
            err = _error()
            lib.hart_model_free(self._model)
            raise err
        self._n_ctx = n_ctx
        self._mmproj = mmproj
        self._engine = None
        self.n_generated = 0  # tokens the last generate computed so far

    def close(self):
        if getattr(self, "_engine", None):
            lib.hart_engine_free(self._engine)
        if getattr(self, "_session", None):
            lib.hart_session_free(self._session)
        if getattr(self, "_model", None):
            lib.hart_model_free(self._model)
        self._engine = self._session = self._model = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    @property
    def n_vocab(self):
        return lib.hart_n_vocab(self._model)

    @property
    def n_embd(self):
        return lib.hart_n_embd(self._model)

    @property
    def n_ctx(self):
        return lib.hart_session_n_ctx(self._session)

    def tokenize(self, text, add_special=True, parse_special=False):
        """Token ids, as `hart tokenize` gives them (BOS as the file says; with parse_special,
        control-token texts become those tokens)."""
        data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        need = lib.hart_tokenize(self._model, data, len(data), None, 0, add_special, parse_special)
        _check(need != ERROR_COUNT)
        n = -need if need < 0 else need
        out = (ctypes.c_int32 * max(n, 1))()
        got = lib.hart_tokenize(self._model, data, len(data), out, n, add_special, parse_special)
        _check(got >= 0)
        return list(out[:got])

    def detokenize(self, tokens, special=False):
        ids = (ctypes.c_int32 * max(len(tokens), 1))(*tokens)
        need = lib.hart_detokenize(self._model, ids, len(tokens), None, 0, special)
        _check(need != ERROR_COUNT)
        buf = ctypes.create_string_buffer(-need if need < 0 else 1)
        n = lib.hart_detokenize(self._model, ids, len(tokens), buf, len(buf), special)
        _check(n >= 0)
        return buf.raw[:n].decode("utf-8", "replace")

    def generate(self, prompt, max_tokens=128, temperature=0.8, top_k=40, top_p=0.95, min_p=0.05,
                 repeat_penalty=1.0, repeat_last_n=64, frequency_penalty=0.0, presence_penalty=0.0, seed=None,
                 stop=None, grammar=None, json_schema=None, ignore_eos=False):
        """An iterator of text pieces, as `hart run` streams them. The prompt is text (special
        tokens parsed, BOS added) or a list of token ids. Stopping the iteration early cancels
        the generation. json_schema may be a dict or JSON text."""
        tokens = self.tokenize(prompt, True, True) if isinstance(prompt, str) else list(prompt)
        sp = lib.hart_sampler_default_params()
        sp.temperature, sp.top_k, sp.top_p, sp.min_p = temperature, top_k, top_p, min_p
        sp.repeat_penalty, sp.repeat_last_n = repeat_penalty, repeat_last_n
        sp.frequency_penalty, sp.presence_penalty = frequency_penalty, presence_penalty
        if seed is not None:
            sp.seed = seed
        sp.grammar = grammar.encode() if grammar else None
        if json_schema is not None:
            sp.json_schema = (json_schema if isinstance(json_schema, str) else json.dumps(json_schema)).encode()
        return self._stream(sp, tokens, max_tokens, stop, ignore_eos)

    def _stream(self, sp, tokens, max_tokens, stop, ignore_eos):
        """The generation a step a call (hart_generation_next, the GIL released meanwhile): each
        piece is computed when the consumer asks for it; leaving the loop frees the generation,
        so nothing after the last piece taken is computed."""
        gp = lib.hart_generate_default_params()
        gp.max_tokens, gp.ignore_eos = max_tokens, ignore_eos
        stops = [s.encode() for s in ([stop] if isinstance(stop, str) else stop or [])]
        stop_array = (ctypes.c_char_p * max(len(stops), 1))(*stops)
        gp.stops, gp.n_stops = stop_array, len(stops)
        ids = (ctypes.c_int32 * len(tokens))(*tokens)
        sampler = lib.hart_sampler_new(self._model, ctypes.byref(sp))
        _check(sampler)
        try:
            _check(lib.hart_seq_truncate(self._session, 0, 0) != ERROR_COUNT)
            gen = lib.hart_generation_new(self._session, sampler, ids, len(tokens), ctypes.byref(gp))
            _check(gen)
            try:
                token, piece, length = ctypes.c_int32(), ctypes.POINTER(ctypes.c_char)(), ctypes.c_int32()
                while True:
                    got = lib.hart_generation_next(gen, ctypes.byref(token), ctypes.byref(piece), ctypes.byref(length))
                    _check(got >= 0)
                    if got == 0:
                        break
                    self.n_generated = lib.hart_generation_n_tokens(gen)
                    if length.value > 0:  # whole UTF-8 characters: the library holds back a split one
                        yield ctypes.string_at(piece, length.value).decode("utf-8", "replace")
            finally:
                lib.hart_generation_free(gen)
        finally:
            lib.hart_sampler_free(sampler)

    def embed(self, text):
        """The text's embedding (mean-pooled for a decoder model, Euclidean-normalized), as
        /v1/embeddings gives it."""
        tokens = self.tokenize(text, True, True) if isinstance(text, str) else list(text)
        ids = (ctypes.c_int32 * len(tokens))(*tokens)
        out = (ctypes.c_float * self.n_embd)()
        n = lib.hart_embed(self._session, ids, len(tokens), out, len(out))
        _check(n >= 0)
        return list(out[:n])

    def _request(self, chat, body, stream):
        if self._engine is None:
            ep = lib.hart_engine_default_params()
            ep.n_ctx = self._n_ctx
            engine = lib.hart_engine_new(self._model, ctypes.byref(ep))
            _check(engine)
            if self._mmproj and not lib.hart_engine_load_mmproj(engine, str(self._mmproj).encode()):
                err = _error()
                lib.hart_engine_free(engine)
                raise err
            self._engine = engine
        body = {k: v for k, v in body.items() if v is not None}
        if not stream:
            return json.loads(_owned_string(lib.hart_engine_request(self._engine, chat, json.dumps(body).encode(),
                                                                    ChunkCallback(), None)))
        body["stream"] = True
        return self._stream_request(chat, body)

    def _stream_request(self, chat, body):
        """The chunk dicts as the engine makes them; leaving the loop cancels the request."""
        request = lib.hart_engine_submit(self._engine, chat, json.dumps(body).encode())
        _check(request)
        try:
            chunk = ctypes.c_char_p()
            while True:
                got = lib.hart_request_next(request, ctypes.byref(chunk))
                _check(got >= 0)
                if got == 0:
                    return
                yield json.loads(chunk.value.decode("utf-8"))
        finally:
            lib.hart_request_free(request)

    def create_chat_completion(self, messages, tools=None, tool_choice=None, response_format=None, max_tokens=None,
                               temperature=None, top_p=None, seed=None, stop=None, stream=False, **extra):
        """POST /v1/chat/completions in process: the OpenAI response dict. With stream=True, an
        iterator over the chunk dicts, each as the engine makes it (leaving the loop cancels the
        request). Other fields
        `hart serve` takes go in **extra."""
        body = dict(messages=messages, tools=tools, tool_choice=tool_choice, response_format=response_format,
                    max_tokens=max_tokens, temperature=temperature, top_p=top_p, seed=seed, stop=stop, **extra)
        return self._request(True, body, stream)

    def create_completion(self, prompt, max_tokens=None, temperature=None, top_p=None, seed=None, stop=None,
                          stream=False, **extra):
        """POST /v1/completions in process: the OpenAI response dict (stream=True: the chunks)."""
        body = dict(prompt=prompt, max_tokens=max_tokens, temperature=temperature, top_p=top_p, seed=seed, stop=stop,
                    **extra)
        return self._request(False, body, stream)

    def apply_chat_template(self, messages, tools=None):
        """The prompt text the model's chat template makes of the messages."""
        body = {"messages": messages}
        if tools:
            body["tools"] = tools
        return _owned_string(lib.hart_chat_apply_json(self._model, json.dumps(body).encode()))
