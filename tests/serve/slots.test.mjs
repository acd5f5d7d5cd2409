// End-to-end: llama-server's slot persistence (--slot-save-path; POST /slots/{id}?action=save,
// restore, erase; GET /slots) over plain HTTP, as its scripts call it: a slot saved by one server
// process and restored into a new one makes the next request with that prefix compute only what
// follows, and every bad request is a 4xx in llama-server's error shape.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { TESTDATA, model, startServer } from './harness.mjs';

const json = async (r) => ({ status: r.status, body: await r.json() });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hart-slots-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

// A request in slot `slot`, then the tokens the slot holds and the next turn's prompt (ids).
async function firstTurn(s, slot) {
  const prompt = (await json(await s.post('/tokenize', { content: 'Once upon a time, there was a little girl named Lily. She', add_special: true }))).body.tokens;
  const r = (await json(await s.post('/completion', { prompt, n_predict: 8, temperature: 0, return_tokens: true, id_slot: slot }))).body;
  assert.equal(r.id_slot, slot);
  const more = (await json(await s.post('/tokenize', { content: ' The next day, Tom', add_special: false }))).body.tokens;
  return { held: prompt.length + r.tokens.length - 1, next: [...prompt, ...r.tokens, ...more] };
}

for (const [name, file] of [['stories260K', model('stories260K.gguf')],
                            ['lfm2-tiny: a recurrent state', path.join(TESTDATA, 'archs/models/lfm2-tiny-Q8_0.gguf')]]) {
  describe(`a slot saved, restored in a new process, reused (${name})`, () => {
    const args = ['-m', file, '-c', '512', '-np', '2', '--slot-save-path', dir];
    const filename = `${name.split(':')[0]}.bin`;
    test('save, restore, erase', async () => {
      let first, answer;
      const a = await startServer(args);
      try {
        first = await firstTurn(a, 1);
        const slots = (await json(await fetch(`${a.base}/slots`))).body;
        assert.equal(slots.length, 2);
        assert.deepEqual(slots.map((x) => [x.id, x.is_processing, x.n_tokens]), [[0, false, 0], [1, false, first.held]]);
        const saved = await json(await a.post('/slots/1?action=save', { filename }));
        assert.equal(saved.status, 200, JSON.stringify(saved.body));
        assert.equal(saved.body.id_slot, 1);
        assert.equal(saved.body.filename, filename);
        assert.equal(saved.body.n_saved, first.held);  // llama-server's count: the prompt and all but the last token generated
        assert.equal(saved.body.n_written, fs.statSync(path.join(dir, filename)).size);
        assert.ok(saved.body.timings.save_ms >= 0);
        answer = (await json(await a.post('/completion', { prompt: first.next, n_predict: 8, temperature: 0 }))).body.content;
      } finally {
        await a.stop();
      }
      const b = await startServer(args);
      try {
        const restored = await json(await b.post('/slots/0?action=restore', { filename }));
        assert.equal(restored.status, 200, JSON.stringify(restored.body));
        assert.deepEqual([restored.body.id_slot, restored.body.filename, restored.body.n_restored], [0, filename, first.held]);
        assert.equal(restored.body.n_read, fs.statSync(path.join(dir, filename)).size);
        assert.ok(restored.body.timings.restore_ms >= 0);
        const r = (await json(await b.post('/completion', { prompt: first.next, n_predict: 8, temperature: 0 }))).body;
        assert.equal(r.timings.cache_n, first.held);  // only what follows the restored tokens is computed
        assert.equal(r.timings.prompt_n, first.next.length - first.held);
        assert.equal(r.content, answer);
        assert.equal(r.id_slot, 0);  // the slot that holds the prefix
        const erased = await json(await b.post('/slots/0?action=erase', {}));
        // What the last request left there: its prompt and what it generated (all but a last token not fed back).
        assert.equal(erased.body.id_slot, 0);
        assert.ok(erased.body.n_erased >= first.next.length && erased.body.n_erased <= first.next.length + 8, JSON.stringify(erased.body));
        assert.equal((await json(await b.post('/slots/0?action=erase'))).body.n_erased, 0);
      } finally {
        await b.stop();
      }
    });
  });
}

describe('slot actions refused', () => {
  let s;
  before(async () => (s = await startServer(['-m', model('stories260K.gguf'), '-c', '256', '-np', '2', '--slot-save-path', dir])));
  after(async () => s.stop());

  test('unknown slot or action, bad file names: 400 with llama-server\'s messages', async () => {
    for (const [route, body, message] of [
      ['/slots/2?action=save', { filename: 'x.bin' }, 'Invalid slot ID'], ['/slots/abc?action=save', { filename: 'x.bin' }, 'Invalid slot ID'],
      ['/slots/-1?action=erase', {}, 'Invalid slot ID'], ['/slots/0?action=load', { filename: 'x.bin' }, 'Invalid action'],
      ['/slots/0', { filename: 'x.bin' }, 'Invalid action'], ['/slots/0?action=save', { filename: '../x.bin' }, 'Invalid filename'],
      ['/slots/0?action=restore', { filename: '/etc/passwd' }, 'Invalid filename'], ['/slots/0?action=save', { filename: 'a\\b' }, 'Invalid filename'],
      ['/slots/0?action=save', { filename: '..' }, 'Invalid filename'], ['/slots/0?action=save', { filename: '' }, 'Invalid filename'],
      ['/slots/0?action=save', {}, "'filename' must be a string"], ['/slots/0?action=save', { filename: 3 }, "'filename' must be a string"]]) {
      const { status, body: err } = await json(await s.post(route, body));
      assert.equal(status, 400, route + JSON.stringify(body));
      assert.equal(err.error.code, 400);
      assert.equal(err.error.type, 'invalid_request_error');
      assert.equal(err.error.message, message);
    }
    assert.deepEqual(fs.readdirSync(dir).filter((f) => f.startsWith('x')), []);
  });

  test('a missing, damaged, foreign or not-a-slot file: 400, and the slot is untouched', async () => {
    // An empty slot saves as an empty file of this model, which restores to nothing.
    const empty = await json(await s.post('/slots/1?action=save', { filename: 'empty.bin' }));
    assert.equal(empty.body.n_saved, 0);
    assert.equal((await json(await s.post('/slots/1?action=restore', { filename: 'empty.bin' }))).body.n_restored, 0);
    await s.post('/completion', { prompt: 'One day, a big bird', n_predict: 4, id_slot: 0 });
    const good = await json(await s.post('/slots/0?action=save', { filename: 'good.bin' }));
    assert.ok(good.body.n_saved > 0);
    const bytes = fs.readFileSync(path.join(dir, 'good.bin'));
    const damaged = Buffer.from(bytes);
    damaged[damaged.length >> 1] ^= 0x40;
    fs.writeFileSync(path.join(dir, 'damaged.bin'), damaged);
    fs.writeFileSync(path.join(dir, 'cut.bin'), bytes.subarray(0, bytes.length - 100));
    fs.writeFileSync(path.join(dir, 'text.bin'), 'not a slot\n');
    // Saved by a server of another model (the same architecture, other weights and vocabulary).
    const other = await startServer(['-m', model('TinyStories-656K-Q8_0.gguf'), '-c', '256', '--slot-save-path', dir]);
    try {
      await other.post('/completion', { prompt: 'One day, a big bird', n_predict: 4, id_slot: 0 });
      assert.equal((await other.post('/slots/0?action=save', { filename: 'other.bin' })).status, 200);
    } finally {
      await other.stop();
    }
    for (const [filename, why] of [['missing.bin', /no file 'missing.bin'/], ['damaged.bin', /damaged/], ['cut.bin', /damaged|cut short/],
                                   ['text.bin', /not a hart slot file/], ['other.bin', /saved by another model \(llama/]]) {
      const { status, body: err } = await json(await s.post('/slots/1?action=restore', { filename }));
      assert.equal(status, 400, filename);
      assert.equal(err.error.type, 'invalid_request_error');
      assert.match(err.error.message, /^Unable to restore slot: /);
      assert.match(err.error.message, why);
    }
    const slots = (await json(await fetch(`${s.base}/slots`))).body;
    assert.equal(slots[1].n_tokens, 0);
    assert.equal((await json(await s.post('/slots/1?action=restore', { filename: 'good.bin' }))).body.n_restored, good.body.n_saved);
  });

  test('/props names the slots', async () => {
    const props = (await json(await fetch(`${s.base}/props`))).body;
    assert.equal(props.total_slots, 2);
    assert.equal(props.endpoint_slots, true);
  });
});

test('without --slot-save-path: 501 as llama-server answers; with --no-prefix-cache: refused at start', async () => {
  const s = await startServer(['-m', model('stories260K.gguf'), '-c', '256']);
  try {
    for (const action of ['save', 'restore', 'erase']) {
      const { status, body } = await json(await s.post(`/slots/0?action=${action}`, { filename: 'x.bin' }));
      assert.equal(status, 501);
      assert.equal(body.error.type, 'not_supported_error');
      assert.equal(body.error.message, 'This server does not support slots action. Start it with `--slot-save-path`');
    }
    assert.equal((await json(await fetch(`${s.base}/slots`))).body.length, 4);  // -np's default
  } finally {
    await s.stop();
  }
  await assert.rejects(startServer(['-m', model('stories260K.gguf'), '--slot-save-path', dir, '--no-prefix-cache']), /no-prefix-cache/);
});
