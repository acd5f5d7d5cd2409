#!/usr/bin/env python3
# Writes a LoRA adapter in llama.cpp's GGUF adapter format for a model: random F32 A and B
# (a fixed seed, Python's own generator) of rank RANK for every matrix whose name matches, and
# token_embd's pair in llama.cpp's embedding layout. Pure Python: no numpy, no gguf-py.
#   make_lora_adapter.py MODEL.gguf OUT.gguf [RANK] [ALPHA]
import random
import struct
import sys

from gguf_f32 import write_gguf

SCALAR = {0: 'B', 1: 'b', 2: 'H', 3: 'h', 4: 'I', 5: 'i', 6: 'f', 7: '?', 10: 'Q', 11: 'q', 12: 'd'}


def read_model(path):
    data = open(path, 'rb').read()
    pos = 0

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from('<' + fmt, data, pos)
        pos += struct.calcsize('<' + fmt)
        return v[0]

    def string():
        nonlocal pos
        n = take('Q')
        s = data[pos:pos + n].decode()
        pos += n
        return s

    def value(t):
        if t == 8:
            return string()
        if t == 9:
            et, n = take('I'), take('Q')
            return [value(et) for _ in range(n)]
        return take(SCALAR[t])

    assert data[:4] == b'GGUF'
    pos = 4
    take('I')
    n_tensors, n_kv = take('Q'), take('Q')
    kv = {}
    for _ in range(n_kv):
        k = string()
        kv[k] = value(take('I'))
    tensors = []
    for _ in range(n_tensors):
        name = string()
        nd = take('I')
        ne = [take('Q') for _ in range(nd)]
        take('I'), take('Q')
        tensors.append((name, ne))
    return kv, tensors


def main():
    model, out = sys.argv[1], sys.argv[2]
    rank = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    alpha = float(sys.argv[4]) if len(sys.argv) > 4 else 8.0
    kv, tensors = read_model(model)
    rng = random.Random(20261207)
    rand = lambda n, r: [rng.uniform(-r, r) for _ in range(n)]
    adapted = ('attn_q.weight', 'attn_v.weight', 'ffn_up.weight',
               'output.weight')
    pairs = []
    for name, ne in tensors:
        if name == 'token_embd.weight':  # A (rank, n_vocab) looked up by rows, B (rank, n_embd)
            pairs.append((name + '.lora_a', [rank, ne[1]], rand(rank * ne[1], 0.5)))
            pairs.append((name + '.lora_b', [rank, ne[0]], rand(rank * ne[0], 0.05)))
        elif name.endswith(adapted):  # W (k, n): A (k, rank), B (rank, n)
            pairs.append((name + '.lora_a', [ne[0], rank], rand(ne[0] * rank, 0.5)))
            pairs.append((name + '.lora_b', [rank, ne[1]], rand(rank * ne[1], 0.05)))
    meta = {
        'general.architecture': (8, kv['general.architecture']),
        'general.type': (8, 'adapter'),
        'adapter.type': (8, 'lora'),
        'adapter.lora.alpha': (6, alpha),
    }
    write_gguf(out, meta, pairs)


main()
