"""ctypes declarations of include/hart.h: the structs, callbacks and functions the binding calls.

The library is found as $HART_LIBRARY (a path), else libhart.so.<ABI> on the loader's path (the
libhart1 package installs it in /usr/lib)."""
import ctypes
import os

ABI_VERSION = 1
ERROR_COUNT = -(2**31)
TOKEN_NONE = -1
LOGITS_LAST, LOGITS_ALL, LOGITS_NONE = 0, 1, 2

c_int32_p = ctypes.POINTER(ctypes.c_int32)
c_float_p = ctypes.POINTER(ctypes.c_float)


class ModelParams(ctypes.Structure):
    _fields_ = [("n_threads", ctypes.c_int32), ("cpu_mask", ctypes.c_uint64), ("use_mmap", ctypes.c_bool),
                ("devices", ctypes.c_char_p)]


class SessionParams(ctypes.Structure):
    _fields_ = [("n_ctx", ctypes.c_int32), ("n_batch", ctypes.c_int32), ("n_seq", ctypes.c_int32),
                ("cache_type", ctypes.c_int), ("n_threads", ctypes.c_int32)]


class SamplerParams(ctypes.Structure):
    _fields_ = [("temperature", ctypes.c_float), ("top_k", ctypes.c_int32), ("top_p", ctypes.c_float),
                ("min_p", ctypes.c_float), ("repeat_penalty", ctypes.c_float), ("repeat_last_n", ctypes.c_int32),
                ("frequency_penalty", ctypes.c_float), ("presence_penalty", ctypes.c_float),
                ("seed", ctypes.c_uint64), ("grammar", ctypes.c_char_p), ("json_schema", ctypes.c_char_p)]


class GenerateParams(ctypes.Structure):
    _fields_ = [("max_tokens", ctypes.c_int32), ("ignore_eos", ctypes.c_bool),
                ("stops", ctypes.POINTER(ctypes.c_char_p)), ("n_stops", ctypes.c_int32)]


class EngineParams(ctypes.Structure):
    _fields_ = [("n_ctx", ctypes.c_int32), ("kv_size", ctypes.c_int32), ("chunk_size", ctypes.c_int32),
                ("max_queue", ctypes.c_int32), ("prefix_cache", ctypes.c_bool), ("cache_type", ctypes.c_int)]


TokenCallback = ctypes.CFUNCTYPE(ctypes.c_bool, ctypes.c_int32, ctypes.POINTER(ctypes.c_char), ctypes.c_int32,
                                 ctypes.c_void_p)
ChunkCallback = ctypes.CFUNCTYPE(ctypes.c_bool, ctypes.c_char_p, ctypes.c_void_p)

P = ctypes.c_void_p  # every handle is opaque
_SIGNATURES = {
    "hart_version": (ctypes.c_char_p, []),
    "hart_abi_version": (ctypes.c_int32, []),
    "hart_last_error": (ctypes.c_char_p, []),
    "hart_last_status": (ctypes.c_int, []),
    "hart_status_name": (ctypes.c_char_p, [ctypes.c_int]),
    "hart_string_free": (None, [P]),
    "hart_model_default_params": (ModelParams, []),
    "hart_model_load": (P, [ctypes.c_char_p, ctypes.POINTER(ModelParams)]),
    "hart_model_free": (None, [P]),
    "hart_n_vocab": (ctypes.c_int32, [P]),
    "hart_n_embd": (ctypes.c_int32, [P]),
    "hart_n_ctx_train": (ctypes.c_int32, [P]),
    "hart_token_is_eog": (ctypes.c_bool, [P, ctypes.c_int32]),
    "hart_tokenize": (ctypes.c_int32, [P, ctypes.c_char_p, ctypes.c_int32, c_int32_p, ctypes.c_int32, ctypes.c_bool,
                                       ctypes.c_bool]),
    "hart_detokenize": (ctypes.c_int32, [P, c_int32_p, ctypes.c_int32, ctypes.c_char_p, ctypes.c_int32, ctypes.c_bool]),
    "hart_session_default_params": (SessionParams, []),
    "hart_session_new": (P, [P, ctypes.POINTER(SessionParams)]),
    "hart_session_free": (None, [P]),
    "hart_session_n_ctx": (ctypes.c_int32, [P]),
    "hart_session_cancel": (ctypes.c_int, [P]),
    "hart_decode": (ctypes.c_int, [P, c_int32_p, ctypes.c_int32]),
    "hart_logits": (c_float_p, [P]),
    "hart_embed": (ctypes.c_int32, [P, c_int32_p, ctypes.c_int32, c_float_p, ctypes.c_int32]),
    "hart_seq_truncate": (ctypes.c_int32, [P, ctypes.c_int32, ctypes.c_int32]),
    "hart_sampler_default_params": (SamplerParams, []),
    "hart_sampler_new": (P, [P, ctypes.POINTER(SamplerParams)]),
    "hart_sampler_free": (None, [P]),
    "hart_generate_default_params": (GenerateParams, []),
    "hart_generate": (ctypes.c_int32, [P, P, c_int32_p, ctypes.c_int32, ctypes.POINTER(GenerateParams), TokenCallback,
                                       ctypes.c_void_p]),
    "hart_generation_new": (P, [P, P, c_int32_p, ctypes.c_int32, ctypes.POINTER(GenerateParams)]),
    "hart_generation_next": (ctypes.c_int, [P, c_int32_p, ctypes.POINTER(ctypes.POINTER(ctypes.c_char)), c_int32_p]),
    "hart_generation_n_tokens": (ctypes.c_int32, [P]),
    "hart_generation_free": (None, [P]),
    "hart_engine_submit": (P, [P, ctypes.c_bool, ctypes.c_char_p]),
    "hart_request_next": (ctypes.c_int, [P, ctypes.POINTER(ctypes.c_char_p)]),
    "hart_request_free": (None, [P]),
    "hart_chat_apply_json": (P, [P, ctypes.c_char_p]),
    "hart_engine_default_params": (EngineParams, []),
    "hart_engine_new": (P, [P, ctypes.POINTER(EngineParams)]),
    "hart_engine_free": (None, [P]),
    "hart_engine_load_mmproj": (ctypes.c_bool, [P, ctypes.c_char_p]),
    "hart_engine_request": (P, [P, ctypes.c_bool, ctypes.c_char_p, ChunkCallback, ctypes.c_void_p]),
}


def _load():
    path = os.environ.get("HART_LIBRARY") or f"libhart.so.{ABI_VERSION}"
    lib = ctypes.CDLL(path)
    for name, (restype, argtypes) in _SIGNATURES.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = restype, argtypes
    if lib.hart_abi_version() != ABI_VERSION:
        raise ImportError(f"{path} has the C API's ABI {lib.hart_abi_version()}, this binding needs {ABI_VERSION}")
    return lib


lib = _load()
