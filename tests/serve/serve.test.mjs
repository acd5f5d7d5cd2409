// End-to-end: `hart serve` driven by the official openai client over loopback.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import path from 'node:path';
import { metric, model, startServer, TESTDATA } from './harness.mjs';

const greedy = { temperature: 0 };
const stories = ['Once upon a time', 'The little dog', 'Lily and Tom went to the park.', 'One day, a big bird',
                 'The sun was hot and', 'Mom said', 'Tim had a red ball.', 'The cat sat'];

describe('stories260K, prefix cache on', () => {
  let s;
  before(async () => (s = await startServer(['-m', model('stories260K.gguf'), '-c', '512'])));
  after(async () => s.stop());

  test('completion, non-streaming, with usage', async () => {
    const r = await s.client.completions.create({ model: 'x', prompt: 'Once upon a time', max_tokens: 12, ...greedy });
    assert.equal(r.object, 'text_completion');
    assert.ok(r.choices[0].text.length > 0);
    assert.equal(r.choices[0].finish_reason, 'length');
    assert.equal(r.usage.completion_tokens, 12);
    assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + 12);
    assert.equal(typeof r.usage.prompt_tokens_details.cached_tokens, 'number');
  });

  test('routers: health, model and server metadata, routing hints', async () => {
    assert.deepEqual(await (await fetch(`${s.base}/health`)).json(), { status: 'ok' });
    for (const route of ['/model_info', '/get_model_info']) {
      const info = await (await fetch(`${s.base}${route}`)).json();
      assert.ok(info.model_path.endsWith('stories260K.gguf'));
      assert.equal(info.is_generation, true);
      assert.equal(info.model_type, 'llama');
    }
    for (const route of ['/server_info', '/get_server_info']) {
      const info = await (await fetch(`${s.base}${route}`)).json();
      assert.equal(info.context_length, 512);
      assert.equal(info.draining, false);
      assert.ok(info.max_total_num_tokens >= 512);
    }
    const r = await s.client.completions.create({ model: 'x', prompt: 'Once', max_tokens: 2, prompt_cache_key: 'k', user: 'u' });
    assert.equal(r.usage.completion_tokens, 2);
    const bad = await s.post('/v1/completions', { prompt: 'Once', prompt_cache_key: 7 });
    assert.equal(bad.status, 400);
    assert.equal((await bad.json()).error.param, 'prompt_cache_key');
  });

  test('chat streaming equals non-streaming, usage in the last chunk', async () => {
    const req = { model: 'x', messages: [{ role: 'user', content: 'Tell me a story' }], max_tokens: 16, ...greedy };
    const full = await s.client.chat.completions.create(req);
    const stream = await s.client.chat.completions.create({ ...req, stream: true, stream_options: { include_usage: true } });
    let text = '', finish = null, usage = null;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      for (const c of chunk.choices) {
        text += c.delta.content ?? '';
        finish = c.finish_reason ?? finish;
      }
    }
    assert.equal(text, full.choices[0].message.content);
    assert.equal(finish, full.choices[0].finish_reason);
    assert.equal(usage.completion_tokens, full.usage.completion_tokens);
  });

  test('stop strings end the text before them, streaming or not', async () => {
    const base = await s.client.completions.create({ model: 'x', prompt: 'Once upon a time', max_tokens: 24, ...greedy });
    const text = base.choices[0].text;
    const stop = text.slice(10, 14);
    const want = text.slice(0, text.indexOf(stop));
    const r = await s.client.completions.create({ model: 'x', prompt: 'Once upon a time', max_tokens: 24, stop: [stop], ...greedy });
    assert.equal(r.choices[0].text, want);
    assert.equal(r.choices[0].finish_reason, 'stop');
    let streamed = '';
    const st = await s.client.completions.create({ model: 'x', prompt: 'Once upon a time', max_tokens: 24, stop, stream: true, ...greedy });
    for await (const c of st) streamed += c.choices[0]?.text ?? '';
    assert.equal(streamed, want);
  });

  test('16 concurrent greedy requests equal the same requests one at a time', async () => {
    const reqs = Array.from({ length: 16 }, (_, i) => ({ model: 'x', prompt: stories[i % 8] + ' '.repeat(i >> 3), max_tokens: 20, ...greedy }));
    const alone = [];
    for (const r of reqs) alone.push((await s.client.completions.create(r)).choices[0].text);
    const together = await Promise.all(reqs.map((r) => s.client.completions.create(r)));
    assert.deepEqual(together.map((r) => r.choices[0].text), alone);
  });

  test('a shared system prompt is served from the prefix cache', async () => {
    const system = 'You are a storyteller. ' + 'Every story has a dog, a cat, a ball and a tree in the park. '.repeat(6);
    const shared = (await (await s.post('/tokenize', { content: system })).json()).tokens.length;
    const ask = (q) => s.client.chat.completions.create({ model: 'x', max_tokens: 4, ...greedy,
      messages: [{ role: 'system', content: system }, { role: 'user', content: q }] });
    await ask('Tell me about the dog.');
    const second = await ask('What about the cat?');
    assert.ok(second.usage.prompt_tokens_details.cached_tokens >= shared,
              `cached ${second.usage.prompt_tokens_details.cached_tokens} < shared ${shared}`);
  });

  test('logprobs', async () => {
    const r = await s.client.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'hi' }], max_tokens: 3,
                                                       logprobs: true, top_logprobs: 2, ...greedy });
    const lp = r.choices[0].logprobs.content;
    assert.equal(lp.length, 3);
    assert.equal(lp[0].top_logprobs.length, 2);
    assert.ok(lp[0].logprob <= 0 && lp[0].logprob >= lp[0].top_logprobs[1].logprob);
  });

  test('bad requests get OpenAI errors and the server keeps serving', async () => {
    const bad = await s.post('/v1/completions', '{not json');
    assert.equal(bad.status, 400);
    assert.equal((await bad.json()).error.type, 'invalid_request_error');
    const wrongType = await s.post('/v1/completions', { prompt: 'hi', temperature: 'warm' });
    assert.equal((await wrongType.json()).error.param, 'temperature');
    await assert.rejects(s.client.completions.create({ model: 'x', prompt: 'hi', max_tokens: 5000 }),
                         (e) => e.status === 400 && /max_tokens/.test(e.message));
    await assert.rejects(s.client.completions.create({ model: 'x', prompt: 'word '.repeat(600), max_tokens: 1 }),
                         (e) => e.status === 400 && /context/.test(e.message));
    const ok = await s.client.completions.create({ model: 'x', prompt: 'Mom said', max_tokens: 2 });
    assert.equal(ok.usage.completion_tokens, 2);
  });

  test('a client that disconnects is cancelled; others are served', async () => {
    const before = await metric(s.base, 'hart_requests_total{finish_reason="cancelled"}');
    const ctrl = new AbortController();
    const st = await s.client.completions.create({ model: 'x', prompt: 'Once', max_tokens: 400, stream: true }, { signal: ctrl.signal });
    try {
      for await (const chunk of st) if (chunk) ctrl.abort();  // gone after the first chunk
    } catch {}
    for (let i = 0; i < 200 && (await metric(s.base, 'hart_requests_total{finish_reason="cancelled"}')) === before; i++)
      await new Promise((r) => setTimeout(r, 25));
    assert.equal(await metric(s.base, 'hart_requests_total{finish_reason="cancelled"}'), before + 1);
    const ok = await s.client.completions.create({ model: 'x', prompt: 'Mom said', max_tokens: 3 });
    assert.equal(ok.usage.completion_tokens, 3);
  });

  test('models, health, tokenize, detokenize, metrics', async () => {
    const models = await s.client.models.list();
    assert.equal(models.data[0].id, 'stories260K.gguf');
    const ids = (await (await s.post('/tokenize', { content: 'Once upon a time' })).json()).tokens;
    assert.ok(ids.length > 0);
    assert.equal((await (await s.post('/detokenize', { tokens: ids })).json()).content, 'Once upon a time');
    const withBos = (await (await s.post('/tokenize', { content: 'Once upon a time', add_special: true })).json()).tokens;
    assert.equal(withBos.length, ids.length + 1);
    const bad = await s.post('/tokenize', { content: 'Once', add_special: 'yes' });
    assert.equal(bad.status, 400);
    assert.equal((await bad.json()).error.param, 'add_special');
    assert.ok((await metric(s.base, 'hart_generation_tokens_total')) > 0);
    assert.ok((await metric(s.base, 'hart_time_to_first_token_seconds_count')) > 0);
    assert.ok((await metric(s.base, 'hart_kv_slots')) > 0);
  });
});

describe('a non-streaming client that disconnects', () => {
  let s;
  // Random weights: greedy decoding does not meet EOS, so the request would run for seconds.
  before(async () => (s = await startServer(['-m', model('llama-2-tiny-random.gguf'), '-c', '2048', '--no-prefix-cache'])));
  after(async () => s.stop());

  test('frees its slots at once instead of generating max_tokens', async () => {
    const maxTokens = 2000;
    const ctrl = new AbortController();
    const req = s.client.completions.create({ model: 'x', prompt: 'Once', max_tokens: maxTokens, ...greedy }, { signal: ctrl.signal });
    while ((await metric(s.base, 'hart_requests_running')) === 0) await new Promise((r) => setTimeout(r, 5));
    ctrl.abort();
    await assert.rejects(req);
    const settled = async () => (await metric(s.base, 'hart_requests_total{finish_reason="cancelled"}')) === 1 &&
                                (await metric(s.base, 'hart_requests_running')) === 0;
    for (let i = 0; i < 400 && !(await settled()); i++) await new Promise((r) => setTimeout(r, 25));
    assert.equal(await metric(s.base, 'hart_requests_total{finish_reason="cancelled"}'), 1);
    assert.ok((await metric(s.base, 'hart_generation_tokens_total')) < maxTokens);
    assert.equal(await metric(s.base, 'hart_kv_slots_used'), 0);
    assert.equal(await metric(s.base, 'hart_requests_running'), 0);
  });
});

describe('random weights', () => {
  test('text that is not UTF-8 is sent as U+FFFD, streaming or not, and the server lives on', async () => {
    const s = await startServer(['-m', model('kq-tiny-Q4_K_M.gguf'), '-c', '512']);
    try {
      const words = 'the dog cat ball tree park sun bird girl boy mom happy big little red ran saw played'.split(' ');
      const prompt = '4 ' + Array.from({ length: 128 }, (_, i) => words[(i * 13) % 18]).join(' ');
      const req = { model: 'x', prompt, max_tokens: 24, ...greedy };
      let streamed = '';
      for await (const c of await s.client.completions.create({ ...req, stream: true })) streamed += c.choices[0]?.text ?? '';
      assert.ok(streamed.includes('\ufffd'));
      const full = await s.client.completions.create(req);
      assert.ok(full.choices[0].text.includes('\ufffd'));
    } finally {
      await s.stop();
    }
  });
});

describe('tiny KV pool', () => {
  let s;
  before(async () => (s = await startServer(['-m', model('stories260K.gguf'), '-c', '128', '--kv-size', '160', '--chunk-size', '32'])));
  after(async () => s.stop());

  test('32 concurrent long requests all complete, equal to one at a time', async () => {
    const reqs = Array.from({ length: 32 }, (_, i) => ({ model: 'x', max_tokens: 48, ...greedy,
      prompt: `${stories[i % 8]} ${stories[(i + 3) % 8]} ${stories[(i >> 3) % 8]}` }));
    const together = await Promise.all(reqs.map((r) => s.client.completions.create(r)));
    const alone = [];
    for (const r of reqs.slice(0, 8)) alone.push((await s.client.completions.create(r)).choices[0].text);
    assert.deepEqual(together.slice(0, 8).map((r) => r.choices[0].text), alone);
    for (const r of together) assert.ok(['length', 'stop'].includes(r.choices[0].finish_reason));
    assert.ok((await metric(s.base, 'hart_kv_slots_used')) <= 160);
  });
});

describe('speculative decoding', () => {
  let s;
  // TinyStories-656K drafted by its own Q4_0; every request drafts unless it says otherwise.
  before(async () => (s = await startServer(['-m', model('TinyStories-656K-Q8_0.gguf'), '-c', '256',
    '--spec-type', 'draft-simple', '-md', model('TinyStories-656K-requant-Q4_0.gguf'), '--spec-draft-n-max', '4'])));
  after(async () => s.stop());

  test('concurrent drafting and plain requests give the plain text; timings and /metrics count the drafts', async () => {
    const body = (i, extra) => ({ model: 'x', prompt: stories[i], max_tokens: 32, ...greedy, ...extra });
    // Half the requests draft, half do not, all at once: their steps share forward passes.
    const together = await Promise.all(stories.map((_, i) =>
      s.client.completions.create(body(i, i % 2 ? { 'speculative.n_max': 0 } : { 'speculative.type': 'ngram-simple,draft-simple' }))));
    const plain = [];
    for (let i = 0; i < stories.length; i++) plain.push(await s.client.completions.create(body(i, { 'speculative.n_max': 0 })));
    assert.deepEqual(together.map((r) => r.choices[0].text), plain.map((r) => r.choices[0].text));
    let drafted = 0;
    for (const [i, r] of together.entries()) {
      if (i % 2) { assert.equal(r.timings.draft_n, undefined); continue; }
      assert.ok(r.timings.draft_n > 0 && r.timings.draft_n_accepted > 0 && r.timings.draft_n_accepted <= r.timings.draft_n);
      drafted += r.timings.draft_n;
    }
    for (const r of plain) assert.equal(r.timings.draft_n, undefined);
    assert.equal(await metric(s.base, 'hart_spec_decode_num_draft_tokens_total'), drafted);
    assert.ok((await metric(s.base, 'hart_spec_decode_num_accepted_tokens_total')) > 0);
  });

  test('a streamed chat reply carries the timings on its last chunk; llama-server\'s /completion too', async () => {
    const req = { model: 'x', messages: [{ role: 'user', content: 'Tell me a story' }], max_tokens: 24, ...greedy };
    let text = '', last;
    for await (const c of await s.client.chat.completions.create({ ...req, stream: true })) {
      text += c.choices[0]?.delta?.content ?? '';
      last = c;
    }
    assert.ok(last.timings.draft_n > 0);
    const once = await s.client.chat.completions.create({ ...req, 'speculative.n_max': 0 });
    assert.equal(text, once.choices[0].message.content);
    const native = await (await s.post('/completion', { prompt: stories[0], n_predict: 16, temperature: 0,
                                                        'speculative.n_max': 2 })).json();
    assert.ok(native.timings.draft_n > 0 && native.timings.draft_n <= 2 * 16);
  });

  test('what the server cannot draft with, or a bad length, is a 400 naming the field', async () => {
    for (const [field, value] of [['speculative.type', 'ngram-cache'], ['speculative.type', 'draft-mtp'],
                                  ['speculative.n_max', -1], ['speculative.p_min', 2], ['speculative.n_max', 'many']]) {
      const r = await s.post('/v1/completions', { model: 'x', prompt: 'Once', max_tokens: 4, [field]: value });
      assert.equal(r.status, 400, `${field}=${value}`);
      assert.equal((await r.json()).error.param, field);
    }
  });
});

describe('limits and options', () => {
  test('without -m the built-in stories260K is served under its name', async () => {
    const s = await startServer(['-c', '128']);
    try {
      assert.deepEqual((await s.client.models.list()).data.map((m) => m.id), ['stories260K']);
      assert.equal((await (await fetch(`${s.base}/model_info`)).json()).model_path, 'stories260K (built-in)');
      const r = await s.client.completions.create({ model: 'x', prompt: 'Once upon a time', max_tokens: 9, ...greedy });
      assert.equal(r.choices[0].text, ', there was a little girl named');
    } finally {
      await s.stop();
    }
  });

  test('queue full gives 503; API key is enforced', async () => {
    const s = await startServer(['-m', model('stories260K.gguf'), '--max-queue', '0', '--api-key', 'sekret'], { apiKey: 'sekret' });
    try {
      await assert.rejects(s.client.completions.create({ model: 'x', prompt: 'hi', max_tokens: 2 }),
                           (e) => e.status === 503 && /busy/.test(e.message));
      const noKey = await s.post('/v1/completions', { prompt: 'hi' });
      assert.equal(noKey.status, 401);
      // A queue that takes nothing is not ready for a router.
      const health = await fetch(`${s.base}/health`);
      assert.equal(health.status, 503);
      assert.equal((await health.json()).status, 'busy');
    } finally {
      await s.stop();
    }
  });

  test('qwen3 chat template, no prefix cache', async () => {
    const s = await startServer(['-m', model('qwen3-tiny-Q8_0.gguf'), '-c', '256', '--no-prefix-cache']);
    try {
      const ask = () => s.client.chat.completions.create({ model: 'x', max_tokens: 6, ...greedy,
        messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello there' }] });
      const a = await ask(), b = await ask();
      assert.equal(b.choices[0].message.content, a.choices[0].message.content);
      assert.equal(b.usage.prompt_tokens_details.cached_tokens, 0);
      assert.ok(a.usage.prompt_tokens > 10);
    } finally {
      await s.stop();
    }
  });
});

describe('qwen3 with Qwen3\'s template: tools, choices, embeddings, templates', () => {
  let s;
  // qwen3-tiny has no template of its own: Qwen3-0.6B's, with its Hermes tool calls and <think>.
  const template = path.join(TESTDATA, 'chat_templates', 'templates', 'Qwen-Qwen3-0.6B.jinja');
  before(async () => (s = await startServer(['-m', model('qwen3-tiny-Q8_0.gguf'), '-c', '512', '--chat-template-file', template])));
  after(async () => s.stop());
  const tools = [{ type: 'function', function: { name: 'get_weather', description: 'The weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];
  const messages = [{ role: 'user', content: 'What is the weather in Paris?' }];

  // Random weights: whatever the reply, its shape is OpenAI's, and streaming adds up to it.
  test('tools: the reply has OpenAI\'s shape, streamed or not', async () => {
    const req = { model: 'x', messages, tools, max_tokens: 24, ...greedy };
    const full = await s.client.chat.completions.create(req);
    const c = full.choices[0];
    assert.ok(['stop', 'length', 'tool_calls'].includes(c.finish_reason));
    assert.equal(c.message.role, 'assistant');
    for (const call of c.message.tool_calls ?? []) {
      assert.equal(call.type, 'function');
      assert.match(call.id, /^call_/);
      JSON.parse(call.function.arguments);
    }
    let content = '', reasoning = '', finish = null;
    for await (const chunk of await s.client.chat.completions.create({ ...req, stream: true })) {
      for (const ch of chunk.choices) {
        content += ch.delta.content ?? '';
        reasoning += ch.delta.reasoning_content ?? '';
        finish = ch.finish_reason ?? finish;
      }
    }
    assert.equal(content, c.message.content ?? '');
    assert.equal(reasoning, c.message.reasoning_content ?? '');
    assert.equal(finish, c.finish_reason);
  });

  test('bad tool requests are 400s with OpenAI\'s error shape', async () => {
    const cases = [
      [{ messages, tools: { type: 'function' } }, 'tools'],
      [{ messages, tools: [{ type: 'function', function: { name: 'bad name' } }] }, 'tools'],
      [{ messages, tools, tool_choice: { type: 'function', function: { name: 'other' } } }, 'tool_choice'],
      [{ messages, tools, tool_choice: 'required', response_format: { type: 'json_object' } }, 'tool_choice'],
      [{ messages, tool_choice: 'required', tools: [{ type: 'function', function: { name: 'f',
        parameters: { type: 'object', properties: { s: { type: 'string', format: 'email' } } } } }] }, 'tools'],
      [{ messages, tools, parallel_tool_calls: 1 }, 'parallel_tool_calls'],
      [{ messages: [...messages, { role: 'tool', tool_call_id: 'call_none', content: '18 C' }] }, 'messages'],
    ];
    for (const [body, param] of cases) {
      const r = await s.post('/v1/chat/completions', body);
      assert.equal(r.status, 400, JSON.stringify(body));
      const { error } = await r.json();
      assert.equal(error.type, 'invalid_request_error');
      assert.equal(error.param, param);
      assert.equal(typeof error.message, 'string');
      assert.equal(error.code, null);
    }
  });

  // Constrained decoding: even random weights make a call whose arguments validate.
  test('a named tool_choice or "required" yields a valid call, streamed and not', async () => {
    const { default: Ajv } = await import('ajv');
    const params = { type: 'object', properties: { city: { type: 'string', maxLength: 12 }, days: { type: 'integer' } },
                     required: ['city', 'days'] };
    // Bounded strings: a random model would not end an unbounded one within max_tokens.
    const forced = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object',
                      properties: { city: { type: 'string', maxLength: 8 } }, required: ['city'] } } },
                    { type: 'function', function: { name: 'get_time', parameters: params } }];
    const valid = new Ajv().compile(params), validWeather = new Ajv().compile(forced[0].function.parameters);
    for (const [tool_choice, seed] of [[{ type: 'function', function: { name: 'get_time' } }, 1], ['required', 2]]) {
      const req = { model: 'x', messages, tools: forced, tool_choice, max_tokens: 160, temperature: 1, seed };
      const r = await s.client.chat.completions.create(req);
      const c = r.choices[0];
      assert.equal(c.finish_reason, 'tool_calls', JSON.stringify(c));
      assert.equal(c.message.tool_calls.length, 1);
      const call = c.message.tool_calls[0].function;
      if (typeof tool_choice === 'object') assert.equal(call.name, 'get_time');
      const args = JSON.parse(call.arguments);
      const check = call.name === 'get_time' ? valid : validWeather;
      assert.ok(check(args), JSON.stringify(check.errors));
      let name = '', streamedArgs = '', finish = null;
      for await (const chunk of await s.client.chat.completions.create({ ...req, stream: true }))
        for (const ch of chunk.choices) {
          for (const tc of ch.delta.tool_calls ?? []) {
            name += tc.function?.name ?? '';
            streamedArgs += tc.function?.arguments ?? '';
          }
          finish = ch.finish_reason ?? finish;
        }
      assert.equal(finish, 'tool_calls');
      assert.equal(name, call.name);
      assert.equal(streamedArgs, call.arguments);
    }
  });

  test('a tool result that answers a call is accepted', async () => {
    const r = await s.client.chat.completions.create({ model: 'x', tools, max_tokens: 4, ...greedy, messages: [...messages,
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '18 C' }] });
    assert.equal(r.choices.length, 1);
  });

  test('n: 3 gives 3 choices, the prompt counted once, reproducible with a seed, streamed alike', async () => {
    const req = { model: 'x', messages, max_tokens: 8, temperature: 1, seed: 11, n: 3 };
    const one = await s.client.chat.completions.create({ ...req, n: 1 });
    const r = await s.client.chat.completions.create(req);
    assert.equal(r.choices.length, 3);
    assert.deepEqual(r.choices.map((c) => c.index), [0, 1, 2]);
    assert.equal(r.usage.prompt_tokens, one.usage.prompt_tokens);
    assert.equal(r.usage.completion_tokens, r.choices.length * 8);
    assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens);
    const texts = r.choices.map((c) => c.message.content);
    assert.equal(new Set(texts).size, 3, 'distinct sampling streams');
    const again = await s.client.chat.completions.create(req);
    assert.deepEqual(again.choices.map((c) => c.message.content), texts);
    const streamed = ['', '', ''];
    let usage = null;
    for await (const chunk of await s.client.chat.completions.create({ ...req, stream: true, stream_options: { include_usage: true } })) {
      if (chunk.usage) usage = chunk.usage;
      for (const c of chunk.choices) streamed[c.index] += c.delta.content ?? '';
    }
    assert.deepEqual(streamed, texts);
    assert.equal(usage.prompt_tokens, one.usage.prompt_tokens);
    assert.equal(usage.completion_tokens, 24);
    const bad = await s.post('/v1/chat/completions', { messages, n: 0 });
    assert.equal((await bad.json()).error.param, 'n');
  });

  test('embeddings: equal inputs equal, different inputs different, base64 the same floats', async () => {
    const r = await s.client.embeddings.create({ model: 'x', input: ['The cat sat', 'The cat sat', 'A dog ran far away'], encoding_format: 'float' });
    assert.equal(r.data.length, 3);
    const [a, b, c] = r.data.map((d) => d.embedding);
    assert.ok(a.length > 0);
    assert.deepEqual(a, b);
    assert.notDeepEqual(a, c);
    assert.ok(Math.abs(Math.hypot(...a) - 1) < 1e-4, 'Euclidean-normalized');
    assert.ok(r.usage.prompt_tokens > 0 && r.usage.total_tokens === r.usage.prompt_tokens);
    const raw = await (await s.post('/v1/embeddings', { input: 'The cat sat', encoding_format: 'base64' })).json();
    const buf = Buffer.from(raw.data[0].embedding, 'base64');
    const floats = Array.from(new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4));
    assert.deepEqual(floats, a);
    const bad = await s.post('/v1/embeddings', { input: 3 });
    assert.equal(bad.status, 400);
    assert.equal((await bad.json()).error.param, 'input');
  });

  // No template in the file: chatml, which has no tool syntax, takes tools in llama.cpp's generic
  // JSON format; Qwen3-Coder's template gets a syntax derived from it. Random weights: the shape.
  test('tools for templates without a syntax hart parses by hand: generic and derived', async () => {
    const coder = path.join(TESTDATA, 'chat_templates', 'templates', 'Qwen3-Coder.jinja');
    for (const extra of [[], ['--chat-template-file', coder]]) {
      const t = await startServer(['-m', model('qwen3-tiny-Q8_0.gguf'), '-c', '1024', '--no-prefix-cache', ...extra]);
      try {
        const req = { model: 'x', messages, tools, max_tokens: 48, ...greedy };
        const full = await t.client.chat.completions.create(req);
        const c = full.choices[0];
        assert.ok(['stop', 'length', 'tool_calls'].includes(c.finish_reason));
        for (const call of c.message.tool_calls ?? []) {
          assert.equal(call.function.name, 'get_weather');
          JSON.parse(call.function.arguments);
        }
        let content = '';
        const names = [];
        for await (const chunk of await t.client.chat.completions.create({ ...req, stream: true })) {
          const d = chunk.choices[0]?.delta ?? {};
          content += d.content ?? '';
          for (const tc of d.tool_calls ?? []) if (tc.function?.name) names.push(tc.function.name);
        }
        const want = (c.message.tool_calls ?? []).map((x) => x.function.name);
        if (c.finish_reason === 'length') {
          // Cut off: a call the stream already named stays sent; the whole reply keeps only whole calls.
          assert.deepEqual(names.slice(0, want.length), want);
        } else {
          assert.equal(content, c.message.content ?? '');
          assert.deepEqual(names, want);
        }
        // The generic format is a grammar on the reply: another grammar cannot join it.
        const both = await t.post('/v1/chat/completions', { messages, tools, max_tokens: 4, response_format: { type: 'json_object' } });
        assert.equal(both.status, extra.length ? 200 : 400);
      } finally {
        await t.stop();
      }
    }
  });

  test('/v1/responses: text, function tools, streamed events', async () => {
    const r = await s.client.responses.create({ model: 'x', input: 'Hello', instructions: 'Be brief.', max_output_tokens: 6, temperature: 0 });
    assert.equal(r.object, 'response');
    assert.ok(['completed', 'incomplete'].includes(r.status));
    assert.equal(r.usage.output_tokens, 6);
    const types = [];
    let text = '';
    for await (const ev of await s.client.responses.create({ model: 'x', input: 'Hello', instructions: 'Be brief.', max_output_tokens: 6,
                                                                   temperature: 0, stream: true })) {
      types.push(ev.type);
      if (ev.type === 'response.output_text.delta') text += ev.delta;
      if (ev.type === 'response.completed' || ev.type === 'response.incomplete') assert.deepEqual(ev.response.output.length, r.output.length);
    }
    assert.equal(types[0], 'response.created');
    assert.ok(['response.completed', 'response.incomplete'].includes(types.at(-1)));
    assert.equal(text, r.output.filter((o) => o.type === 'message').map((o) => o.content[0].text).join(''));
    const withTools = await s.client.responses.create({ model: 'x', input: 'weather?', max_output_tokens: 4, temperature: 0,
      tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} } }] });
    assert.equal(withTools.object, 'response');
    const bad = await s.post('/v1/responses', { input: 'x', tools: [{ type: 'web_search' }] });
    assert.equal(bad.status, 400);
    assert.equal((await bad.json()).error.param, 'tools');
  });

  test('/apply-template and /v1/models metadata', async () => {
    const r = await (await s.post('/apply-template', { messages })).json();
    assert.match(r.prompt, /<\|im_start\|>user\nWhat is the weather in Paris\?<\|im_end\|>/);
    assert.match(r.prompt, /<\|im_start\|>assistant\n$/);
    const models = await (await fetch(`${s.base}/v1/models`)).json();
    const meta = models.data[0].meta;
    for (const k of ['vocab_type', 'n_vocab', 'n_ctx_train', 'n_embd', 'n_params', 'size', 'n_ctx']) assert.ok(meta[k] > 0, k);
  });
});

// Forced calls in each call syntax with a grammar, on random weights with each family's real
// template: the call validates, and sent back with its tool result it renders (Mistral Nemo's
// template refuses ids that are not 9 letters and digits).
describe('forced tool calls in the Llama 3.x, Mistral, gpt-oss and Gemma 4 syntaxes', () => {
  const templates = [['meta-llama-Llama-3.1-8B-Instruct.jinja', /^call_/], ['mistralai-Mistral-Nemo-Instruct-2407.jinja', /^[a-zA-Z0-9]{9}$/],
                     ['Mistral-Small-3.2-24B-Instruct-2506.jinja', /^[a-zA-Z0-9]{9}$/], ['openai-gpt-oss-120b.jinja', /^call_/],
                     ['google-gemma-4-31B-it.jinja', /^call_/]];
  const params = { type: 'object', properties: { city: { type: 'string', maxLength: 8 }, days: { type: 'integer' } },
                   required: ['city', 'days'] };
  const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } },
                 { type: 'function', function: { name: 'get_time', parameters: params } }];
  const messages = [{ role: 'user', content: 'What time is it in Paris?' }];
  for (const [file, idPattern] of templates) {
    test(file, async () => {
      const { default: Ajv } = await import('ajv');
      const template = path.join(TESTDATA, 'chat_templates', 'templates', file);
      const s = await startServer(['-m', model('qwen3-tiny-Q8_0.gguf'), '-c', '1024', '--chat-template-file', template]);
      try {
        const req = { model: 'x', messages, tools, tool_choice: { type: 'function', function: { name: 'get_time' } },
                      max_tokens: 120, temperature: 1, seed: 3 };
        const c = (await s.client.chat.completions.create(req)).choices[0];
        assert.equal(c.finish_reason, 'tool_calls', JSON.stringify(c));
        assert.equal(c.message.tool_calls.length, 1);
        const call = c.message.tool_calls[0];
        assert.equal(call.function.name, 'get_time');
        const valid = new Ajv().compile(params);
        assert.ok(valid(JSON.parse(call.function.arguments)), JSON.stringify(valid.errors));
        assert.match(call.id, idPattern);
        let streamed = '';
        for await (const chunk of await s.client.chat.completions.create({ ...req, stream: true }))
          for (const ch of chunk.choices) for (const tc of ch.delta.tool_calls ?? []) streamed += tc.function?.arguments ?? '';
        assert.equal(streamed, call.function.arguments);
        const next = await s.client.chat.completions.create({ model: 'x', tools, max_tokens: 2, messages: [...messages,
          { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: call.id, content: '12:00' }] });
        assert.equal(next.choices.length, 1);
      } finally {
        await s.stop();
      }
    });
  }
});
