// End-to-end: LoRA adapters in `hart serve` as llama-server has them: --lora / --lora-scaled /
// --lora-init-without-apply, GET and POST /lora-adapters, and a request's own "lora" list, on
// stories260K with the test adapter (tests/golden/lora). The adapter's greedy text is llama.cpp's
// (the golden beside it, from llama-completion de3ff81); requests under other scales never
// share the prefix cache's K/V, also when they run in one batch.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { startServer } from './harness.mjs';

// The repository's own files: the built-in stories260K and the test adapter (no shared test data).
const repo = (f) => fileURLToPath(new URL(`../../${f}`, import.meta.url));
const adapter = repo('tests/golden/lora/stories260K-lora.gguf');
const golden = JSON.parse(fs.readFileSync(fileURLToPath(new URL('../golden/lora/stories260K-lora.json', import.meta.url))));
const json = async (r) => ({ status: r.status, body: await r.json() });
const prompt = golden.prompt;
const n_predict = golden.n_predict;

describe('hart serve --lora', () => {
  let s;
  before(async () => { s = await startServer(['-m', repo('models/stories260K.gguf'), '-c', '256', '--lora', adapter]); });
  after(async () => { await s.stop(); });
  const complete = async (extra = {}) => {
    const r = await json(await s.post('/completion', { prompt, n_predict, temperature: 0, ...extra }));
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body;
  };

  test('GET /lora-adapters lists the adapter at scale 1', async () => {
    const r = await json(await fetch(`${s.base}/lora-adapters`));
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, [{ id: 0, path: adapter, scale: 1, task_name: '', prompt_prefix: '' }]);
  });

  test("the adapter's greedy text is llama.cpp's; scale 0 is the base model's", async () => {
    const withAdapter = await complete();
    assert.equal(withAdapter.content, golden.with_adapter);
    assert.deepEqual(withAdapter.generation_settings.lora, [{ id: 0, scale: 1 }]);
    const base = await complete({ lora: [{ id: 0, scale: 0 }] });
    assert.equal(base.content, golden.without_adapter);
    // Same prompt, other weights: nothing of the adapter's K/V was reused.
    assert.equal(base.timings.cache_n, 0);
    const again = await complete({ lora: [{ id: 0, scale: 0 }] });
    assert.equal(again.timings.cache_n, again.tokens_evaluated - 1);
    // The OpenAI routes read the same field.
    const chat = await s.client.completions.create({ model: 'x', prompt, max_tokens: n_predict, temperature: 0, lora: [{ id: 0, scale: 0 }] });
    assert.equal(chat.choices[0].text, golden.without_adapter);
  });

  test('POST /lora-adapters sets the scales of requests without their own', async () => {
    const set = await json(await s.post('/lora-adapters', [{ id: 0, scale: 0 }]));
    assert.deepEqual([set.status, set.body], [200, { success: true }]);
    assert.equal((await json(await fetch(`${s.base}/lora-adapters`))).body[0].scale, 0);
    assert.equal((await complete()).content, golden.without_adapter);
    assert.equal((await complete({ lora: [{ id: 0, scale: 1 }] })).content, golden.with_adapter);
    assert.equal((await json(await s.post('/lora-adapters', [{ id: 0, scale: 1 }]))).status, 200);
    assert.equal((await complete()).content, golden.with_adapter);
  });

  test('requests under different scales share a batch, each exact', async () => {
    const scales = [1, 0, 0.5, 1, 0];
    const alone = [];
    for (const scale of scales) alone.push((await complete({ lora: [{ id: 0, scale }] })).content);
    const together = await Promise.all(scales.map((scale) => complete({ lora: [{ id: 0, scale }] })));
    assert.deepEqual(together.map((r) => r.content), alone);
    assert.notEqual(alone[2], alone[0]);
    assert.notEqual(alone[2], alone[1]);
  });

  test('bad lists are 400s in the client\'s error shape', async () => {
    for (const lora of [[{ id: 1, scale: 1 }], [{ id: -1, scale: 1 }], [{ id: 0 }], [{ id: 0, scale: 'x' }], [5], { id: 0, scale: 1 }]) {
      const r = await json(await s.post('/completion', { prompt, n_predict: 2, lora }));
      assert.equal(r.status, 400, JSON.stringify(lora));
      assert.match(r.body.error.message, /lora/);
    }
    const chat = await json(await s.post('/v1/chat/completions', { messages: [{ role: 'user', content: 'hi' }], lora: [{ id: 3, scale: 1 }] }));
    assert.equal(chat.status, 400);
    assert.equal(chat.body.error.param, 'lora');
    for (const body of [{ id: 0, scale: 1 }, [{ id: 2, scale: 1 }], 'not json']) {
      const r = await json(await s.post('/lora-adapters', body));
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.error.code, 400);  // llama-server's error shape
    }
    // The API key guards it as every route.
    const keyed = await startServer(['-m', repo('models/stories260K.gguf'), '-c', '256', '--lora', adapter, '--api-key', 'k']);
    try {
      assert.equal((await fetch(`${keyed.base}/lora-adapters`)).status, 401);
      const ok = await fetch(`${keyed.base}/lora-adapters`, { headers: { Authorization: 'Bearer k' } });
      assert.equal(ok.status, 200);
    } finally {
      await keyed.stop();
    }
    // Embeddings are computed without adapters: refused while the server's scales apply one.
    const e = await json(await s.post('/v1/embeddings', { input: 'hi' }));
    assert.equal(e.status, 501);
    assert.match(e.body.error.message, /LoRA/);
  });
});

describe('hart serve --lora-init-without-apply', () => {
  let s;
  before(async () => {
    s = await startServer(['-m', repo('models/stories260K.gguf'), '-c', '256', '--lora-scaled', `${adapter}:0.5`, '--lora-init-without-apply']);
  });
  after(async () => { await s.stop(); });

  test('loads the adapter at scale 0', async () => {
    assert.equal((await json(await fetch(`${s.base}/lora-adapters`))).body[0].scale, 0);
    const r = await json(await s.post('/completion', { prompt, n_predict, temperature: 0 }));
    assert.equal(r.body.content, golden.without_adapter);
    assert.equal((await json(await s.post('/v1/embeddings', { input: 'hi' }))).status, 200);
  });
});

test('a server without adapters refuses a request that names one', async () => {
  const s = await startServer(['-m', repo('models/stories260K.gguf'), '-c', '256']);
  try {
    assert.deepEqual((await json(await fetch(`${s.base}/lora-adapters`))).body, []);
    const r = await json(await s.post('/completion', { prompt, n_predict: 2, lora: [{ id: 0, scale: 1 }] }));
    assert.equal(r.status, 400);
    assert.match(r.body.error.message, /no LoRA adapters/);
    assert.equal((await json(await s.post('/completion', { prompt, n_predict: 2, lora: [] }))).status, 200);
  } finally {
    await s.stop();
  }
});

test('a slot saved under an adapter restores only beside the same adapter, and reuses its K/V', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hart-lora-slots-'));
  const args = ['-m', repo('models/stories260K.gguf'), '-c', '256', '-np', '1', '--slot-save-path', dir];
  const body = { prompt, n_predict, temperature: 0, lora: [{ id: 0, scale: 1 }], id_slot: 0 };
  try {
    const a = await startServer([...args, '--lora', adapter]);
    let first;
    try {
      first = (await json(await a.post('/completion', body))).body;
      assert.equal(first.content, golden.with_adapter);
      assert.equal((await json(await a.post('/slots/0?action=save', { filename: 'lora.bin' }))).status, 200);
    } finally {
      await a.stop();
    }
    const b = await startServer([...args, '--lora-scaled', `${adapter}:0`]);
    try {
      assert.equal((await json(await b.post('/slots/0?action=restore', { filename: 'lora.bin' }))).status, 200);
      // Under the saved scales the restored K/V serve the prompt; under others they do not.
      const plain = (await json(await b.post('/completion', { ...body, lora: [] }))).body;
      assert.equal(plain.timings.cache_n, 0);
      assert.equal(plain.content, golden.without_adapter);
      const again = (await json(await b.post('/completion', body))).body;
      assert.equal(again.timings.cache_n, again.tokens_evaluated - 1);
      assert.equal(again.content, golden.with_adapter);
    } finally {
      await b.stop();
    }
    const c = await startServer(args);  // no adapter: another model for the slot file
    try {
      const r = await json(await c.post('/slots/0?action=restore', { filename: 'lora.bin' }));
      assert.equal(r.status, 400);
      assert.match(r.body.error.message, /saved by another model .*1 LoRA adapters/);
    } finally {
      await c.stop();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
