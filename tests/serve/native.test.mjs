// End-to-end: llama-server's own routes (/completion, /infill, /props) as its web UI, llama.vim /
// llama.vscode and scripts call them, over plain HTTP.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import path from 'node:path';
import { model, startServer } from './harness.mjs';

const json = async (r) => ({ status: r.status, body: await r.json() });
// The data lines of a native stream (no [DONE]).
const streamed = async (r) => (await r.text()).trim().split('\n\n').map((l) => JSON.parse(l.slice('data: '.length)));

describe('/completion and /props (stories260K)', () => {
  let s;
  before(async () => (s = await startServer(['-m', model('stories260K.gguf'), '-c', '512'])));
  after(async () => s.stop());

  test('greedy completion: llama-server\'s fields, the same text as /v1/completions, streamed alike', async () => {
    const req = { prompt: 'Once upon a time', n_predict: 12, temperature: 0, return_tokens: true };
    const { status, body } = await json(await s.post('/completion', req));
    assert.equal(status, 200);
    assert.equal(body.stop, true);
    assert.equal(body.stop_type, 'limit');
    assert.equal(body.tokens_predicted, 12);
    assert.equal(body.tokens.length, 12);
    assert.equal(body.tokens_evaluated, (await json(await s.post('/tokenize', { content: req.prompt, add_special: true }))).body.tokens.length);
    assert.equal(body.prompt, '<s> Once upon a time');
    assert.equal(body.generation_settings.n_predict, 12);
    assert.deepEqual(body.generation_settings.samplers, ['penalties', 'top_k', 'top_p', 'min_p', 'temperature']);
    assert.equal(body.timings.predicted_n, 12);
    const oai = await s.client.completions.create({ model: 'x', prompt: req.prompt, max_tokens: 12, temperature: 0 });
    assert.equal(body.content, oai.choices[0].text);
    assert.equal((await json(await s.post('/completions', req))).body.content, body.content);  // llama-server's alias
    const lines = await streamed(await s.post('/completion', { ...req, stream: true }));
    assert.equal(lines.map((l) => l.content).join(''), body.content);
    assert.ok(lines.slice(0, -1).every((l) => l.stop === false));
    assert.equal(lines.at(-1).stop, true);
    assert.equal(lines.at(-1).tokens_predicted, 12);
    assert.deepEqual(lines.slice(0, -1).flatMap((l) => l.tokens), body.tokens);
  });

  test('n_probs, stop words, n_predict 0 warming the cache, a token-id prompt', async () => {
    const probs = (await json(await s.post('/completion', { prompt: 'The dog', n_predict: 3, temperature: 0, n_probs: 2 }))).body;
    assert.equal(probs.completion_probabilities.length, 3);
    for (const p of probs.completion_probabilities) {
      assert.equal(p.top_logprobs.length, 2);
      assert.equal(p.top_logprobs[0].id, p.id);  // greedy: the most likely token
      assert.ok(p.logprob <= 0);
    }
    const text = (await json(await s.post('/completion', { prompt: 'Lily and Tom', n_predict: 24, temperature: 0 }))).body.content;
    const word = text.slice(6, 9);
    const cut = (await json(await s.post('/completion', { prompt: 'Lily and Tom', n_predict: 24, temperature: 0, stop: ['zzz', word] }))).body;
    assert.equal(cut.stop_type, 'word');
    assert.equal(cut.stopping_word, word);
    assert.equal(cut.content, text.slice(0, text.indexOf(word)));
    const warm = (await json(await s.post('/completion', { prompt: 'Tim had a big red ball and a blue kite.', n_predict: 0 }))).body;
    assert.equal(warm.content, '');
    assert.equal(warm.tokens_predicted, 0);
    const again = (await json(await s.post('/completion', { prompt: 'Tim had a big red ball and a blue kite.', n_predict: 1 }))).body;
    assert.equal(again.timings.cache_n, again.tokens_evaluated - 1);
    const ids = (await json(await s.post('/tokenize', { content: 'Once upon a time', add_special: true }))).body.tokens;
    assert.equal((await json(await s.post('/completion', { prompt: ids, n_predict: 12, temperature: 0 }))).body.content,
                 (await json(await s.post('/completion', { prompt: 'Once upon a time', n_predict: 12, temperature: 0 }))).body.content);
  });

  test('a samplers list switches off what it leaves out', async () => {
    const req = { prompt: 'One day', n_predict: 16, temperature: 1.5, seed: 5 };
    const plain = (await json(await s.post('/completion', { ...req, top_k: 0, top_p: 1, min_p: 0 }))).body;
    const listed = (await json(await s.post('/completion', { ...req, samplers: ['penalties', 'temperature'] }))).body;
    assert.equal(listed.content, plain.content);
    assert.equal(listed.generation_settings.top_k, 0);
    assert.equal((await json(await s.post('/completion', { ...req, samplers: 'ekt' }))).body.generation_settings.top_p, 1);
  });

  test('what hart cannot honour is a 400 in llama-server\'s error shape', async () => {
    for (const [body, word] of [[{ prompt: 'x', mirostat: 2 }, /mirostat/], [{ prompt: 'x', samplers: ['temperature', 'top_k'] }, /order/],
                                [{ prompt: 'x', samplers: ['infill', 'temperature'] }, /infill/], [{ prompt: 'x', ignore_eos: true }, /ignore_eos/],
                                [{ prompt: 'x', logit_bias: [[15, -100]] }, /logit_bias/], [{ prompt: 'x', id_slot: 4 }, /id_slot/],
                                [{ prompt: ['a', 'b'] }, /one prompt/], [{ prompt: 'x', n_predict: -2 }, /n_predict/], [{}, /prompt/]]) {
      const { status, body: err } = await json(await s.post('/completion', body));
      assert.equal(status, 400, JSON.stringify(body));
      assert.equal(err.error.code, 400);
      assert.equal(err.error.type, 'invalid_request_error');
      assert.match(err.error.message, word);
    }
    const infill = await json(await s.post('/infill', { input_prefix: 'a', input_suffix: 'b' }));
    assert.equal(infill.status, 501);
    assert.match(infill.body.error.message, /FIM/);
  });

  test('/slots: the slots, and no slot actions without --slot-save-path (slots.test.mjs has them)', async () => {
    const slots = (await json(await fetch(`${s.base}/slots`))).body;
    assert.deepEqual(slots.map((x) => x.id), [0, 1, 2, 3]);
    const r = await s.post('/slots/0?action=save', { filename: 'x.bin' });
    assert.equal(r.status, 501);
    assert.equal((await r.json()).error.type, 'not_supported_error');
  });

  test('/props', async () => {
    const props = (await json(await fetch(`${s.base}/props`))).body;
    assert.equal(props.default_generation_settings.n_ctx, 512);
    assert.equal(props.default_generation_settings.params.temperature, 0.8);
    assert.equal(props.model_alias, 'stories260K.gguf');
    assert.equal(props.bos_token, '<s>');
    assert.equal(props.modalities.vision, false);
  });
});

describe('/infill (qwen3-tiny with Qwen2.5-Coder\'s FIM tokens)', () => {
  let s;
  before(async () => (s = await startServer(['-m', path.join(process.env.HART_TEST_MODELS, 'qwen3-tiny-fim.gguf'), '-c', '4096'])));
  after(async () => s.stop());

  test('the repo-level layout llama.vim / llama.vscode send', async () => {
    const req = { input_prefix: 'def area(r):\n    ', input_suffix: '\n\nprint(area(2))\n', prompt: 'return',
                  input_extra: [{ filename: 'math_utils.py', text: 'PI = 3.14159\n' }, { text: 'x = 1\n' }],
                  n_predict: 8, temperature: 0 };
    const { status, body } = await json(await s.post('/infill', req));
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.prompt, '<|repo_name|>myproject\n<|file_sep|>math_utils.py\nPI = 3.14159\n<|file_sep|>tmp\nx = 1\n' +
                              '<|file_sep|>filename\n<|fim_prefix|>def area(r):\n    return<|fim_suffix|>\n\nprint(area(2))\n<|fim_middle|>');
    assert.ok(body.tokens_predicted >= 1 && body.tokens_predicted <= 8);
    const lines = await streamed(await s.post('/infill', { ...req, stream: true }));
    assert.equal(lines.map((l) => l.content).join(''), body.content);
    for (const [bad, param] of [[{ input_prefix: 'a' }, /input_suffix/], [{ input_prefix: 'a', input_suffix: 'b', input_extra: {} }, /input_extra/],
                                [{ input_prefix: 'a', input_suffix: 'b', input_extra: [{ text: 3 }] }, /input_extra/]]) {
      const r = await json(await s.post('/infill', bad));
      assert.equal(r.status, 400);
      assert.match(r.body.error.message, param);
    }
  });
});

// llama-server --reranking on the same file (llama.cpp de3ff81) gave 0.7397, 0.8770 and 0.6157;
// its matrix products round activations to 8 bits, hence the tolerance.
describe('/v1/rerank (qwen3-tiny converted as llama.cpp converts a Qwen3-Reranker)', () => {
  let s;
  before(async () => (s = await startServer(['-m', path.join(process.env.HART_TEST_MODELS, 'qwen3-tiny-rerank.gguf'), '-c', '512', '--reranking'])));
  after(async () => s.stop());

  test('scores as llama-server\'s, Jina and TEI forms; embeddings and generation refused', async () => {
    const documents = ['hi', 'The giant panda is a bear species endemic to China.', 'Paris is the capital of France.'];
    const { status, body } = await json(await s.post('/v1/rerank', { query: 'What is a panda?', documents }));
    assert.equal(status, 200, JSON.stringify(body));
    assert.deepEqual(body.results.map((r) => r.index), [1, 0, 2]);
    const want = [0.7397, 0.8770, 0.6157];
    for (const r of body.results) assert.ok(Math.abs(r.relevance_score - want[r.index]) < 5e-3, JSON.stringify(r));
    assert.equal(body.usage.prompt_tokens, 253);  // llama-server's count
    const top = (await json(await s.post('/rerank', { query: 'What is a panda?', documents, top_n: 1 }))).body;
    assert.deepEqual(top.results.map((r) => r.index), [1]);
    const tei = (await json(await s.post('/reranking', { query: 'What is a panda?', texts: documents, return_text: true }))).body;
    assert.equal(tei[0].text, documents[1]);
    assert.ok(Math.abs(tei[0].score - body.results[0].relevance_score) < 1e-6);
    assert.equal((await s.post('/v1/rerank', { query: 'q' })).status, 400);
    assert.equal((await s.post('/v1/rerank', { query: 3, documents })).status, 400);
    assert.equal((await s.post('/v1/embeddings', { input: 'x' })).status, 400);
    assert.equal((await s.post('/v1/completions', { prompt: 'x' })).status, 501);
  });

  test('a model that does not rank: 501', async () => {
    const plain = await startServer(['-m', model('stories260K.gguf'), '-c', '256']);
    try {
      assert.equal((await plain.post('/v1/rerank', { query: 'q', documents: ['d'] })).status, 501);
    } finally {
      await plain.stop();
    }
  });
});
