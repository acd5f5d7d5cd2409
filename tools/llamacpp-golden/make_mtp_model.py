#!/usr/bin/env python3
# Writes a tiny qwen35 model with one multi-token-prediction block (`nextn_predict_layers` 1, the
# tensors llama.cpp's qwen35 loader names blk.N.nextn.*), random F32 weights from a fixed seed:
# a Gated DeltaNet layer, a gated-attention layer, then the MTP block (block_count 3 counts it, as
# in llama.cpp), an output matrix of its own, a small SentencePiece vocabulary (specials, the 256
# byte tokens, some words). The layers' matrices are scaled down, so that the model is nearly a
# bigram one (its next token mostly a function of the current one, through the output matrix),
# and the MTP block's eh_proj passes the next token's normed embedding through: the block
# predicts that function of the next token, so it agrees with the model often but not always,
# and speculation keeps some drafts and refuses others. For the draft-mtp tests
# (tests/golden/mtp); pure Python, no numpy. With --moe, a qwen35moe: every feed-forward (the
# MTP block's too) routed experts and a gated shared expert.
#   make_mtp_model.py OUT.gguf [--moe]
import random
import sys

from gguf_f32 import write_gguf

N_EMBD, N_FF, N_HEAD, N_HEAD_KV, HEAD_DIM = 32, 48, 2, 1, 16
SSM_STATE, SSM_K_HEADS, SSM_V_HEADS, SSM_CONV = 16, 2, 2, 4
N_EXPERT, N_EXPERT_USED, N_FF_EXP, N_FF_SHEXP = 4, 2, 16, 16
WORDS = ('once upon a time there was little girl named lily who loved to play in the park with her dog one day '
         'she saw big red ball and ran it happy sun sky tree bird').split()

U32, I32, F32, BOOL, STR, ARR = 4, 5, 6, 7, 8, 9  # GGUF value types


def vocab():
    tokens = ['<unk>', '<s>', '</s>'] + ['<0x%02X>' % b for b in range(256)]
    types = [2, 3, 3] + [6] * 256
    pieces = ['\u2581' + w for w in WORDS] + ['\u2581Once', ',', '.', '\u2581']
    tokens += pieces
    types += [1] * len(pieces)
    scores = [0.0] * 259 + [-float(i) for i in range(len(pieces))]
    return tokens, types, scores


def main():
    out = sys.argv[1]
    moe = '--moe' in sys.argv[2:]
    arch = 'qwen35moe' if moe else 'qwen35'
    rng = random.Random(20261208)
    tokens, types, scores = vocab()
    n_vocab = len(tokens)
    key_dim, value_dim = SSM_STATE * SSM_K_HEADS, SSM_STATE * SSM_V_HEADS
    conv_dim = 2 * key_dim + value_dim
    a = arch + '.'
    u32 = {'vocab_size': n_vocab, 'context_length': 512, 'embedding_length': N_EMBD, 'block_count': 3,
           'nextn_predict_layers': 1, 'feed_forward_length': N_FF, 'attention.head_count': N_HEAD,
           'attention.head_count_kv': N_HEAD_KV, 'attention.key_length': HEAD_DIM,
           'attention.value_length': HEAD_DIM, 'rope.dimension_count': HEAD_DIM, 'ssm.conv_kernel': SSM_CONV,
           'ssm.state_size': SSM_STATE, 'ssm.group_count': SSM_K_HEADS, 'ssm.time_step_rank': SSM_V_HEADS,
           'ssm.inner_size': value_dim}
    if moe:
        u32.update({'expert_count': N_EXPERT, 'expert_used_count': N_EXPERT_USED,
                    'expert_feed_forward_length': N_FF_EXP, 'expert_shared_feed_forward_length': N_FF_SHEXP})
    kv = {'general.architecture': (STR, arch), 'general.name': (STR, arch + '-mtp-tiny')}
    kv.update({a + k: (U32, v) for k, v in u32.items()})
    kv.update({
        a + 'attention.layer_norm_rms_epsilon': (F32, 1e-6),
        a + 'attention.recurrent_layers': (ARR, (U32, [1, 0, 0])),
        a + 'rope.dimension_sections': (ARR, (I32, [4, 4, 4, 4])),
        a + 'rope.freq_base': (F32, 10000.0),
        'tokenizer.ggml.model': (STR, 'llama'),
        'tokenizer.ggml.tokens': (ARR, (STR, tokens)),
        'tokenizer.ggml.scores': (ARR, (F32, scores)),
        'tokenizer.ggml.token_type': (ARR, (I32, types)),
        'tokenizer.ggml.bos_token_id': (U32, 1),
        'tokenizer.ggml.eos_token_id': (U32, 2),
        'tokenizer.ggml.unknown_token_id': (U32, 0),
        'tokenizer.ggml.add_bos_token': (BOOL, True),
        'tokenizer.ggml.add_eos_token': (BOOL, False),
    })

    tensors = []

    def matrix(ne, gain):  # (k, n): values ~ gain/sqrt(k) (1.7: activations keep their scale)
        r = 1.7 * gain / ne[0] ** 0.5
        return uniform(ne, -r, r)

    def eh_proj(ne):  # (2 n_embd, n_embd): the embedding half ~ identity, the h half noise
        d = ne[1]
        return [(1.0 if i == j else 0.0) + rng.uniform(-0.3, 0.3) / d ** 0.5 for j in range(d) for i in range(2 * d)]

    def uniform(ne, lo, hi, base=0.0):
        n = 1
        for d in ne:
            n *= d
        return [base + rng.uniform(lo, hi) for _ in range(n)]

    def add(name, ne, kind, gain=0.5):
        vals = {'norm': lambda: uniform(ne, -0.2, 0.2, 1.0),
                'embed': lambda: uniform(ne, -1.0, 1.0),
                'a': lambda: [-x for x in uniform(ne, 0.5, 2.0)],  # -exp(A_log): negative decay rates
                'small': lambda: uniform(ne, -0.1, 0.1),
                'eh_proj': lambda: eh_proj(ne),
                'matrix': lambda: matrix(ne, gain)}[kind]()
        tensors.append((name, ne, vals))

    def ffn(il):
        if moe:
            b = 'blk.%d.' % il
            add(b + 'ffn_gate_inp.weight', [N_EMBD, N_EXPERT], 'matrix', gain=2.0)
            add(b + 'ffn_gate_up_exps.weight', [N_EMBD, 2 * N_FF_EXP, N_EXPERT], 'matrix')
            add(b + 'ffn_down_exps.weight', [N_FF_EXP, N_EMBD, N_EXPERT], 'matrix')
            add(b + 'ffn_gate_inp_shexp.weight', [N_EMBD], 'matrix', gain=2.0)
            add(b + 'ffn_gate_shexp.weight', [N_EMBD, N_FF_SHEXP], 'matrix')
            add(b + 'ffn_up_shexp.weight', [N_EMBD, N_FF_SHEXP], 'matrix')
            add(b + 'ffn_down_shexp.weight', [N_FF_SHEXP, N_EMBD], 'matrix')
            return
        add('blk.%d.ffn_gate.weight' % il, [N_EMBD, N_FF], 'matrix')
        add('blk.%d.ffn_up.weight' % il, [N_EMBD, N_FF], 'matrix')
        add('blk.%d.ffn_down.weight' % il, [N_FF, N_EMBD], 'matrix')

    def attention(il):
        b = 'blk.%d.' % il
        add(b + 'attn_norm.weight', [N_EMBD], 'norm')
        add(b + 'post_attention_norm.weight', [N_EMBD], 'norm')
        add(b + 'attn_q.weight', [N_EMBD, 2 * HEAD_DIM * N_HEAD], 'matrix')
        add(b + 'attn_k.weight', [N_EMBD, HEAD_DIM * N_HEAD_KV], 'matrix')
        add(b + 'attn_v.weight', [N_EMBD, HEAD_DIM * N_HEAD_KV], 'matrix')
        add(b + 'attn_output.weight', [HEAD_DIM * N_HEAD, N_EMBD], 'matrix')
        add(b + 'attn_q_norm.weight', [HEAD_DIM], 'norm')
        add(b + 'attn_k_norm.weight', [HEAD_DIM], 'norm')
        ffn(il)

    add('token_embd.weight', [N_EMBD, n_vocab], 'embed')
    add('output_norm.weight', [N_EMBD], 'norm')
    add('output.weight', [N_EMBD, n_vocab], 'matrix', gain=2.0)
    b = 'blk.0.'
    add(b + 'attn_norm.weight', [N_EMBD], 'norm')
    add(b + 'post_attention_norm.weight', [N_EMBD], 'norm')
    add(b + 'attn_qkv.weight', [N_EMBD, conv_dim], 'matrix')
    add(b + 'attn_gate.weight', [N_EMBD, value_dim], 'matrix')
    add(b + 'ssm_conv1d.weight', [SSM_CONV, conv_dim], 'matrix')
    add(b + 'ssm_dt.bias', [SSM_V_HEADS], 'small')
    add(b + 'ssm_a', [SSM_V_HEADS], 'a')
    add(b + 'ssm_alpha.weight', [N_EMBD, SSM_V_HEADS], 'matrix')
    add(b + 'ssm_beta.weight', [N_EMBD, SSM_V_HEADS], 'matrix')
    add(b + 'ssm_norm.weight', [SSM_STATE], 'norm')
    add(b + 'ssm_out.weight', [value_dim, N_EMBD], 'matrix')
    ffn(0)
    attention(1)
    attention(2)  # the MTP block: a full-attention block ...
    add('blk.2.nextn.eh_proj.weight', [2 * N_EMBD, N_EMBD], 'eh_proj')  # ... behind these
    add('blk.2.nextn.enorm.weight', [N_EMBD], 'norm')
    add('blk.2.nextn.hnorm.weight', [N_EMBD], 'norm')
    add('blk.2.nextn.shared_head_norm.weight', [N_EMBD], 'norm')

    write_gguf(out, kv, tensors)

main()
