// The Node binding against the library and the CLI: `hart tokenize`'s tokens, `hart run --temp 0`'s
// text, the OpenAI objects of `hart serve`, rejections with the library's message. Needs
// HART_TEST_MODEL (stories260K.gguf) and HART_BIN (the hart executable); skips without.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';

import hart from '../index.mjs';

const MODEL = process.env.HART_TEST_MODEL ?? '';
const HART_BIN = process.env.HART_BIN ?? 'hart';
const PROMPT = 'Once upon a time';
const skip = existsSync(MODEL) ? false : `test data not found: '${MODEL}' (set HART_TEST_MODEL)`;
const run = (...args) => execFileSync(HART_BIN, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });

let m;
before(async () => {
  if (!skip) m = await hart.Model.load(MODEL, { nCtx: 256, nThreads: 1 });
});

test('tokenize is hart tokenize', { skip }, async () => {
  const want = run('tokenize', '-m', MODEL, '--ids', PROMPT).trim().split(/\s+/).map(Number);
  assert.deepEqual(await m.tokenize(PROMPT), want);
  assert.equal(m.detokenize(await m.tokenize(PROMPT, { addSpecial: false })), PROMPT);
});

test('greedy generate is hart run --temp 0', { skip }, async () => {
  const ref = JSON.parse(run('run', '-m', MODEL, '-p', PROMPT, '-n', '24', '--temp', '0', '--json'));
  let text = '';
  for await (const piece of m.generate(PROMPT, { maxTokens: 24, temperature: 0 })) text += piece;
  assert.equal(text, ref.text);
});

test('breaking out of the loop cancels the generation', { skip }, async () => {
  const first = [];
  for await (const piece of m.generate(PROMPT, { maxTokens: 100, temperature: 0 })) {
    first.push(piece);
    if (first.length === 3) break;
  }
  const again = [];
  for await (const piece of m.generate(PROMPT, { maxTokens: 3, temperature: 0 })) again.push(piece);
  assert.deepEqual(again, first);
});

test('pieces come as they are computed, and a break computes no more', { skip }, async () => {
  const pieces = m.generate(PROMPT, { maxTokens: 100, temperature: 0 });
  let n = 0;
  let atFirst = 0;
  for await (const piece of pieces) {
    assert.equal(typeof piece, 'string');
    if (++n === 1) atFirst = pieces.tokens;  // collecting the text first would have computed 100
    if (n === 2) break;
  }
  assert.ok(atFirst >= 1 && atFirst <= 3, `${atFirst} tokens computed for the first piece`);
  const atBreak = pieces.tokens;
  assert.ok(atBreak < 10, `${atBreak} tokens computed for two pieces`);
  assert.equal((await m.tokenize(PROMPT)).length > 0, true);  // the model is free again
});

test('a streamed chat completion yields chunks as they are made', { skip }, async () => {
  const chunks = [];
  for await (const chunk of m.createChatCompletion({ messages: [{ role: 'user', content: 'Once' }], max_tokens: 80,
    stream: true })) {
    chunks.push(chunk);
    if (chunks.length === 2) break;  // cancels the request
  }
  assert.equal(chunks[0].object, 'chat.completion.chunk');
  const r = await m.createCompletion({ prompt: PROMPT, max_tokens: 4, temperature: 0 });
  assert.equal(r.choices[0].finish_reason, 'length');
});

test('createChatCompletion returns the OpenAI object', { skip }, async () => {
  const r = await m.createChatCompletion({ messages: [{ role: 'user', content: 'Once' }], max_tokens: 8, seed: 1,
    response_format: { type: 'json_schema', json_schema: { name: 'a', schema: { enum: ['cat', 'dog'] } } } });
  assert.equal(r.object, 'chat.completion');
  assert.ok(['"cat"', '"dog"'].includes(r.choices[0].message.content.trim()), r.choices[0].message.content);
  await assert.rejects(m.createChatCompletion({ messages: [] }), /HART_ERR_INVALID_ARGUMENT: .*messages/);
});

test('embed gives a unit vector', { skip }, async () => {
  const v = await m.embed(PROMPT);
  assert.equal(v.length, 64);
  assert.ok(Math.abs(Math.hypot(...v) - 1) < 1e-4);
});

test('a bad path rejects with the library message', async () => {
  await assert.rejects(hart.Model.load('/nonexistent/model.gguf'), /HART_ERR_BAD_FILE: .*\/nonexistent\/model.gguf/);
  assert.match(hart.version(), /^\d+\.\d+\.\d+$/);
});

// Images through the projector (HART_VISION_FIXTURES: a folder vision_fixtures wrote): an
// image_url part gives what `hart run --mmproj --image` gives for the prompt the template makes.
const VISION = process.env.HART_VISION_FIXTURES ?? '';
const noVision = existsSync(VISION) ? false : 'no vision fixtures (set HART_VISION_FIXTURES to a folder vision_fixtures wrote)';
test('an image_url part is hart run --image', { skip: noVision }, async () => {
  const [text, mmproj, image] = ['text.gguf', 'mmproj.gguf', 'image.png'].map((f) => `${VISION}/${f}`);
  const url = `data:image/png;base64,${readFileSync(image).toString('base64')}`;
  const prompt = '<|im_start|>user\n<__media__>What is it?<|im_end|>\n<|im_start|>assistant\n';  // the fixture's ChatML
  const want = run('run', '-m', text, '--mmproj', mmproj, '--image', image, '-p', prompt, '-n', '8', '--temp', '0');
  const body = { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }, { type: 'text', text: 'What is it?' }] }],
    max_tokens: 8, temperature: 0 };
  const v = await hart.Model.load(text, { nCtx: 512, nThreads: 1, mmproj });
  assert.equal((await v.createChatCompletion(body)).choices[0].message.content, want.replace(/\n$/, ''));
  const plain = await hart.Model.load(text, { nCtx: 512, nThreads: 1 });  // no projector: refused
  await assert.rejects(plain.createChatCompletion(body), /--mmproj/);
  const wrong = await hart.Model.load(text, { nCtx: 512, nThreads: 1, mmproj: text });  // not a projector
  await assert.rejects(wrong.createChatCompletion(body), /HART_ERR_INVALID_ARGUMENT/);
});
