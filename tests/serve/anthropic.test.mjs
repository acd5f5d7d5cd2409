// End-to-end: `hart serve`'s Anthropic Messages API driven by the official @anthropic-ai/sdk client.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { metric, model, startServer, TESTDATA } from './harness.mjs';

// qwen3-tiny (random weights) with Qwen3-0.6B's template: Hermes tool calls and <think>.
const template = path.join(TESTDATA, 'chat_templates', 'templates', 'Qwen-Qwen3-0.6B.jinja');
const key = 'sekret';
const tools = [{ name: 'get_time', description: 'The time in a city',
                 input_schema: { type: 'object', properties: { city: { type: 'string', maxLength: 8 }, days: { type: 'integer' } },
                                 required: ['city', 'days'] } }];
const messages = [{ role: 'user', content: 'What time is it in Paris?' }];

describe('Anthropic Messages API', () => {
  let s, client;
  before(async () => {
    s = await startServer(['-m', model('qwen3-tiny-Q8_0.gguf'), '-c', '1024', '--chat-template-file', template, '--api-key', key],
                          { apiKey: key });
    client = new Anthropic({ apiKey: key, baseURL: s.base, maxRetries: 0, timeout: 60000 });
  });
  after(async () => s.stop());

  test('a message, not streamed: content blocks, stop_reason, usage; streamed the same', async () => {
    const req = { model: 'x', max_tokens: 12, temperature: 0, system: 'Be brief.', messages };
    const r = await client.messages.create(req);
    assert.equal(r.type, 'message');
    assert.equal(r.role, 'assistant');
    assert.match(r.id, /^msg_/);
    assert.ok(['end_turn', 'max_tokens'].includes(r.stop_reason));
    assert.ok(r.usage.input_tokens + r.usage.cache_read_input_tokens > 10);
    assert.ok(r.usage.output_tokens > 0 && r.usage.output_tokens <= 12);
    for (const b of r.content) assert.ok(['text', 'thinking'].includes(b.type));
    const types = [];
    const stream = client.messages.stream(req);
    stream.on('streamEvent', (ev) => types.push(ev.type));
    const streamed = await stream.finalMessage();
    assert.deepEqual(streamed.content, r.content);
    assert.equal(streamed.stop_reason, r.stop_reason);
    assert.equal(streamed.usage.output_tokens, r.usage.output_tokens);
    assert.equal(types[0], 'message_start');
    assert.deepEqual(types.slice(-2), ['message_delta', 'message_stop']);
    // The wire: each frame's event name is its data's type; a ping follows message_start (the SDK drops it).
    const raw = await (await fetch(`${s.base}/v1/messages`, { method: 'POST', headers: { 'x-api-key': key },
                                                            body: JSON.stringify({ ...req, stream: true }) })).text();
    const frames = raw.trim().split('\n\n').map((f) => f.split('\n'));
    for (const [ev, data] of frames) assert.equal(ev.slice('event: '.length), JSON.parse(data.slice('data: '.length)).type);
    assert.deepEqual(frames.slice(0, 2).map((f) => f[0]), ['event: message_start', 'event: ping']);
    assert.deepEqual(frames.map((f) => f[0]).filter((e) => e !== 'event: ping'), types.map((t) => `event: ${t}`));
  });

  test('a forced tool call, streamed: tool_use with input_json_delta, stop_reason tool_use; the result goes back', async () => {
    const { default: Ajv } = await import('ajv');
    const req = { model: 'x', max_tokens: 120, temperature: 1, top_k: 40, messages, tools, tool_choice: { type: 'tool', name: 'get_time' } };
    const deltas = [];
    const stream = client.messages.stream(req);
    stream.on('streamEvent', (ev) => {
      if (ev.type === 'content_block_delta' && ev.delta.type === 'input_json_delta') deltas.push(ev.delta.partial_json);
    });
    const m = await stream.finalMessage();
    assert.equal(m.stop_reason, 'tool_use', JSON.stringify(m));
    const calls = m.content.filter((b) => b.type === 'tool_use');
    assert.equal(calls.length, 1);
    assert.equal(calls[0].name, 'get_time');
    assert.ok(new Ajv().compile(tools[0].input_schema)(calls[0].input), JSON.stringify(calls[0].input));
    assert.deepEqual(JSON.parse(deltas.join('')), calls[0].input);
    const next = await client.messages.create({ model: 'x', max_tokens: 2, tools, messages: [...messages,
      { role: 'assistant', content: m.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: calls[0].id, content: '12:00' }] }] });
    assert.equal(next.type, 'message');
  });

  test('count_tokens counts what a request would prompt', async () => {
    const req = { model: 'x', system: 'Be brief.', messages, tools };
    const { input_tokens } = await client.messages.countTokens(req);
    const r = await client.messages.create({ ...req, max_tokens: 1 });
    assert.equal(input_tokens, r.usage.input_tokens + r.usage.cache_read_input_tokens);
    // thinking disabled: Qwen3's template closes an empty <think> block in the prompt.
    const off = await client.messages.countTokens({ ...req, thinking: { type: 'disabled' } });
    assert.ok(off.input_tokens > input_tokens);
  });

  test('stop_sequences end the text and are reported', async () => {
    const req = { model: 'x', max_tokens: 24, temperature: 0, messages: [{ role: 'user', content: 'Tell me a story' }],
                  thinking: { type: 'disabled' } };
    const text = (await client.messages.create(req)).content.filter((b) => b.type === 'text').map((b) => b.text).join('');
    assert.ok(text.length >= 8, text);
    const stop = text.slice(4, 7);
    const r = await client.messages.create({ ...req, stop_sequences: ['never-seen-1', 'never-seen-2', 'never-seen-3', 'never-seen-4', stop] });
    assert.equal(r.stop_reason, 'stop_sequence');
    assert.equal(r.stop_sequence, stop);
    assert.equal(r.content.map((b) => b.text).join(''), text.slice(0, text.indexOf(stop)));
  });

  test('bad requests get Anthropic\'s error shape with a 4xx, and are counted', async () => {
    const before = await metric(s.base, 'hart_requests_rejected_total{status="400"}');
    const cases = [
      { model: 'x', max_tokens: 4, messages: [{ role: 'user', content: [{ type: 'hologram' }] }] },
      { model: 'x', max_tokens: 4, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_none', content: 'x' }] }] },
      { model: 'x', max_tokens: 4, messages, tools: [{ type: 'web_search_20250305', name: 'web_search' }] },
      { model: 'x', max_tokens: 99999, messages },
    ];
    for (const body of cases)
      await assert.rejects(client.messages.create(body), (e) => e instanceof Anthropic.BadRequestError &&
                           e.error.type === 'error' && e.error.error.type === 'invalid_request_error', JSON.stringify(body));
    assert.equal(await metric(s.base, 'hart_requests_rejected_total{status="400"}'), before + cases.length);
    const raw = await fetch(`${s.base}/v1/messages`, { method: 'POST', headers: { 'x-api-key': key }, body: '{nope' });
    assert.equal(raw.status, 400);
    assert.equal((await raw.json()).error.type, 'invalid_request_error');
    const wrongKey = new Anthropic({ apiKey: 'wrong', baseURL: s.base, maxRetries: 0 });
    await assert.rejects(wrongKey.messages.create({ model: 'x', max_tokens: 2, messages }),
                         (e) => e instanceof Anthropic.AuthenticationError && e.error.error.type === 'authentication_error');
    // OpenAI's routes take the same key as x-api-key too, and keep OpenAI's error shape.
    const oai = await fetch(`${s.base}/v1/completions`, { method: 'POST', headers: { 'x-api-key': key }, body: '{"prompt": 3}' });
    assert.equal(oai.status, 400);
    assert.equal((await oai.json()).error.param, 'prompt');
  });
});
