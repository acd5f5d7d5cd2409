// End-to-end: `hart serve --mmproj` on the vision fixtures (the tiny Idefics3 projector beside
// stories260K, written by vision_fixtures): an image_url part answered with the tokens `hart run
// --image` gives on the prompt the chat template renders, the image reused by the prefix cache
// when sent again, and images refused by a server without a projector.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { HART, model, startServer } from './harness.mjs';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hart-serve-vision-'));
const file = (name) => path.join(dir, name);
const json = async (r) => ({ status: r.status, body: await r.json() });
const imageChat = (text) => ({
  messages: [{ role: 'user', content: [
    { type: 'image_url', image_url: { url: `data:image/png;base64,${fs.readFileSync(file('image.png')).toString('base64')}` } },
    { type: 'text', text },
  ] }],
  temperature: 0, max_tokens: 10,
});

describe('images (hart serve --mmproj)', () => {
  let s;
  before(async () => {
    execFileSync(process.env.VISION_FIXTURES, [model('stories260K.gguf'), dir]);
    s = await startServer(['-m', file('text.gguf'), '--mmproj', file('mmproj.gguf'), '-c', '512']);
  });
  after(async () => {
    await s.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('an image_url part: hart run --image\'s text, then the prefix cache past the image', async () => {
    const body = imageChat('What is it?');
    const { body: tpl } = await json(await s.post('/apply-template', body));
    assert.match(tpl.prompt, /<__media__>What is it\?/);
    const want = execFileSync(HART, ['run', '-m', file('text.gguf'), '--mmproj', file('mmproj.gguf'), '--image', file('image.png'),
      '-p', tpl.prompt, '-n', '10', '--temp', '0'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().replace(/\n$/, ''); // hart run ends the text with a newline
    const first = await json(await s.post('/v1/chat/completions', body));
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.body.choices[0].message.content, want);
    assert.equal(first.body.usage.prompt_tokens_details.cached_tokens, 0);
    const again = await json(await s.post('/v1/chat/completions', body));
    assert.equal(again.body.choices[0].message.content, want);
    assert.equal(again.body.usage.prompt_tokens_details.cached_tokens, first.body.usage.prompt_tokens - 1);
    assert.equal((await json(await fetch(`${s.base}/props`))).body.modalities.vision, true);
  });

  test('/completion with llama-server\'s multimodal_data: the same text, the image cached the next time', async () => {
    const { body: tpl } = await json(await s.post('/apply-template', imageChat('What is it?')));
    const want = execFileSync(HART, ['run', '-m', file('text.gguf'), '--mmproj', file('mmproj.gguf'), '--image', file('image.png'),
      '-p', tpl.prompt, '-n', '10', '--temp', '0'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().replace(/\n$/, '');
    const image = fs.readFileSync(file('image.png')).toString('base64');
    const req = { prompt: { prompt_string: tpl.prompt, multimodal_data: [image] }, n_predict: 10, temperature: 0 };
    const first = await json(await s.post('/completion', req));
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.body.content, want);
    assert.equal(first.body.prompt, tpl.prompt);
    const again = await json(await s.post('/completion', { ...req, prompt: [req.prompt] }));  // a one-prompt array
    assert.equal(again.body.content, want);
    assert.equal(again.body.timings.cache_n, again.body.tokens_evaluated - 1);
    const text = await json(await s.post('/completion', { prompt: { prompt_string: 'Once upon a time' }, n_predict: 4, temperature: 0 }));
    assert.equal(text.body.content, (await json(await s.post('/completion', { prompt: 'Once upon a time', n_predict: 4, temperature: 0 }))).body.content);
    for (const [bad, why] of [[{ prompt_string: 'no marker', multimodal_data: [image, image] }, /marker/],
                              [{ prompt_string: '<__media__>x', multimodal_data: [Buffer.from('not an image').toString('base64')] }, /image/],
                              [{ prompt_string: '<__media__>x', multimodal_data: ['https://example.com/a.png'] }, /remote/],
                              [{ prompt_string: '<__media__>x', multimodal_data: [3] }, /base64/], [{ multimodal_data: [image] }, /prompt_string/]]) {
      const r = await json(await s.post('/completion', { prompt: bad, n_predict: 2 }));
      assert.equal(r.status, 400, JSON.stringify(bad).slice(0, 80));
      assert.equal(r.body.error.code, 400);
      assert.match(r.body.error.message, why);
    }
  });

  test('bad images: 400 in the OpenAI shape', async () => {
    const remote = imageChat('x');
    remote.messages[0].content[0].image_url.url = 'https://example.com/a.png';
    const r = await json(await s.post('/v1/chat/completions', remote));
    assert.equal(r.status, 400);
    assert.match(r.body.error.message, /remote image URLs are not fetched/);
    const junk = imageChat('x');
    junk.messages[0].content[0].image_url.url = `data:image/png;base64,${Buffer.from('not an image').toString('base64')}`;
    const j = await json(await s.post('/v1/chat/completions', junk));
    assert.equal(j.status, 400);
    assert.match(j.body.error.message, /image 1 of the request/);
  });
});

describe('a slot holding an image, saved and restored in a new process (--slot-save-path)', () => {
  const slots = path.join(dir, 'slots');
  test('the image prompt is reused from the restored slot', async () => {
    fs.mkdirSync(dir, { recursive: true });
    execFileSync(process.env.VISION_FIXTURES, [model('stories260K.gguf'), dir]);
    const args = ['-m', file('text.gguf'), '--mmproj', file('mmproj.gguf'), '-c', '512', '--slot-save-path', slots];
    const req = { prompt: { prompt_string: '<__media__>What is it?', multimodal_data: [fs.readFileSync(file('image.png')).toString('base64')] },
                  n_predict: 6, temperature: 0, id_slot: 0 };
    let first, saved;
    const a = await startServer(args);
    try {
      first = (await json(await a.post('/completion', req))).body;
      saved = (await json(await a.post('/slots/0?action=save', { filename: 'image.bin' }))).body;
      assert.equal(saved.n_saved, first.tokens_evaluated + first.tokens_predicted - 1);
    } finally {
      await a.stop();
    }
    const b = await startServer(args);
    try {
      assert.equal((await json(await b.post('/slots/1?action=restore', { filename: 'image.bin' }))).body.n_restored, saved.n_saved);
      const again = (await json(await b.post('/completion', { ...req, id_slot: -1 }))).body;
      assert.equal(again.content, first.content);
      assert.equal(again.timings.cache_n, first.tokens_evaluated - 1);  // the image and the text, all but the last token
      assert.equal(again.id_slot, 1);
    } finally {
      await b.stop();
      fs.rmSync(slots, { recursive: true, force: true });
    }
  });
});

describe('images without --mmproj', () => {
  let s;
  before(async () => (s = await startServer(['-m', model('stories260K.gguf'), '-c', '256'])));
  after(async () => s.stop());
  test('refused with a 400 naming --mmproj', async () => {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(file('image.png'), 'x');
    const r = await json(await s.post('/v1/chat/completions', imageChat('x')));
    assert.equal(r.status, 400);
    assert.match(r.body.error.message, /--mmproj/);
    const c = await json(await s.post('/completion', { prompt: { prompt_string: '<__media__>x', multimodal_data: ['eA=='] } }));
    assert.equal(c.status, 400);
    assert.match(c.body.error.message, /--mmproj/);
  });
});
