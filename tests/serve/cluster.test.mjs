// Three `hart serve` replicas behind HAProxy, started by scripts/serve-cluster (loopback only):
// requests sharing a prompt_cache_key meet their prefix cache, a replica killed mid-load costs
// only the streams it was sending, a restarted one rejoins, a drained one finishes its requests
// and exits 0. SERVE_CLUSTER is the script, HART the binary (set by CTest).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import OpenAI from 'openai';
import { HART, freePortRange, model, startServer } from './harness.mjs';

const SCRIPT = process.env.SERVE_CLUSTER;
// Random weights: greedy decoding does not meet EOS, so a request runs for all its max_tokens.
const MODEL = model('llama-2-tiny-random.gguf');
const SERVE_ARGS = ['-c', '4096'];  // the replicas also get -t 1: three share two cores
const greedy = { temperature: 0, seed: 1 };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function startCluster(replicas) {
  const port = await freePortRange(replicas + 1);
  const proc = spawn(SCRIPT, ['-m', MODEL, '--replicas', String(replicas), '--port', String(port), '--hart', HART, '-t', '1', ...SERVE_ARGS],
                     { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '', log = '';
  proc.stderr.on('data', (d) => (log += d));
  const ready = new Promise((resolve, reject) => {
    proc.stdout.on('data', (d) => {
      out += d;
      if (out.includes(`cluster ready on port ${port}`)) resolve();
    });
    proc.on('exit', (code) => reject(new Error(`serve-cluster exited with ${code}: ${log}`)));
  });
  await ready;
  const members = [...out.matchAll(/^replica (\d+) pid (\d+) port (\d+)$/gm)].map((m) => ({ pid: Number(m[2]), port: Number(m[3]) }));
  assert.equal(members.length, replicas, out);
  const base = `http://127.0.0.1:${port}`;
  return {
    base,
    members,
    client: new OpenAI({ apiKey: 'none', baseURL: `${base}/v1`, maxRetries: 0, timeout: 60000 }),
    exited: new Promise((resolve) => proc.on('exit', (code) => resolve(code))),
    stop() {
      proc.kill('SIGTERM');
      return this.exited;
    },
  };
}

// A streamed completion read with Node's fetch: resolves with the text and the finish reason,
// rejects when the stream is cut off (fetch's own error; the openai client's node-fetch would
// report that as an unhandled rejection). onFirst(replica) runs at the first text, while the
// stream is under way, with the replica HAProxy sent it to (its X-Served-By: r1, r2, ...).
async function stream(base, body, onFirst = () => {}) {
  const res = await fetch(`${base}/v1/completions`, { method: 'POST', body: JSON.stringify({ ...body, stream: true }) });
  assert.equal(res.status, 200, await res.clone().text());
  const replica = res.headers.get('x-served-by');
  let buf = '', text = '', finish = null, done = false;
  const decoder = new TextDecoder();
  for await (const chunk of res.body) {
    buf += decoder.decode(chunk, { stream: true });
    for (let cut; (cut = buf.indexOf('\n\n')) >= 0; buf = buf.slice(cut + 2)) {
      const frame = buf.slice(0, cut);
      if (frame === 'data: [DONE]') done = true;
      else if (frame.startsWith('data: ')) {
        const choice = JSON.parse(frame.slice(6)).choices?.[0];
        if (choice?.text && !text && !choice.finish_reason) onFirst(replica);
        text += choice?.text ?? '';
        finish = choice?.finish_reason ?? finish;
      }
    }
  }
  if (!done) throw new Error('the stream ended without [DONE]');
  return { text, finish };
}

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

// Served by replica `port`: its own count of finished requests.
async function finishedOn(port) {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return text.split('\n').filter((l) => l.startsWith('hart_requests_total{')).reduce((n, l) => n + Number(l.split(' ').pop()), 0);
}

// A story-like system prompt per group, long enough that its prefill dominates.
const words = 'the dog cat ball tree park sun bird girl boy mom happy big little red ran saw played'.split(' ');
const systemPrompt = (g) => `Group ${g}. ` + Array.from({ length: 160 }, (_, i) => words[(i * 7 + g * 5) % words.length]).join(' ');
const groupRequest = (g, i) => ({ model: 'x', prompt: `${systemPrompt(g)}\nQuestion ${i}: what did the ${words[i]} do?`,
                                  max_tokens: 8, ...greedy, prompt_cache_key: `group-${g}` });

async function tokenize(base, content) {
  return (await (await fetch(`${base}/tokenize`, { method: 'POST', body: JSON.stringify({ content, add_special: true }) })).json()).tokens;
}

describe('three replicas behind HAProxy', () => {
  let c;
  before(async () => (c = await startCluster(3)));
  let restarted;  // the replica the failover test restarts, the drain test drains
  after(async () => {
    if (restarted) await restarted.stop();
    if (!c) return;
    assert.equal(await c.stop(), 0);
    for (const m of c.members) assert.ok(!alive(m.pid), `replica pid ${m.pid} outlived the cluster`);
  });

  test('requests with a prompt_cache_key reach the replica holding their prefix; outputs equal one server\'s', async () => {
    const groups = 6, perGroup = 10;
    const shared = [];
    for (let g = 0; g < groups; g++) {
      const [a, b] = [await tokenize(c.base, groupRequest(g, 0).prompt), await tokenize(c.base, groupRequest(g, 1).prompt)];
      let n = 0;
      while (n < a.length && a[n] === b[n]) n++;
      assert.ok(n > 150, `group ${g} shares only ${n} tokens`);
      shared.push(n);
    }
    // Each group's first request fills its replica's cache; the other nine then all reuse it.
    const firsts = await Promise.all(Array.from({ length: groups }, (_, g) => c.client.completions.create(groupRequest(g, 0))));
    const rest = await Promise.all(Array.from({ length: groups * (perGroup - 1) }, (_, j) => {
      const g = j % groups, i = 1 + Math.floor(j / groups);
      return c.client.completions.create(groupRequest(g, i)).then((r) => ({ g, i, r }));
    }));
    for (const { g, i, r } of rest)
      assert.ok(r.usage.prompt_tokens_details.cached_tokens >= shared[g],
                `group ${g} request ${i}: ${r.usage.prompt_tokens_details.cached_tokens} cached of ${shared[g]} shared`);
    // The keys spread the groups: more than one replica served them.
    const served = await Promise.all(c.members.map((m) => finishedOn(m.port)));
    assert.ok(served.filter((n) => n > 0).length >= 2, `served per replica: ${served}`);

    const one = await startServer(['-m', MODEL, ...SERVE_ARGS]);
    try {
      for (let g = 0; g < groups; g++) assert.equal(firsts[g].choices[0].text, (await one.client.completions.create(groupRequest(g, 0))).choices[0].text);
      for (const { g, i, r } of rest.slice(0, 12))
        assert.equal(r.choices[0].text, (await one.client.completions.create(groupRequest(g, i))).choices[0].text);
    } finally {
      await one.stop();
    }
  });

  test('a replica killed under load costs only the streams it was sending; restarted, it rejoins', async (t) => {
    // Long enough to be under way at the kill: some streams are cut, some requests replayed.
    const request = (k) => ({ model: 'x', prompt: `Request ${k} begins`, max_tokens: 4000, ...greedy });
    // The victim is the replica of the 8th stream to start, killed as that stream's first text
    // arrives: a stream is then known to be in flight on it, with thousands of tokens to go.
    // (A replica fixed in advance was sometimes done with its streams, or had none, when a
    // loaded machine ran the others behind: the kill then cut nothing.)
    let started = 0, victim, streams;
    const killed = new Promise((resolve, reject) => {
      const onFirst = (replica) => {
        if (++started !== 8) return;
        victim = c.members[Number(/^r(\d+)$/.exec(replica)?.[1]) - 1];
        if (!victim) return reject(new Error(`X-Served-By names no replica: ${replica}`));
        process.kill(victim.pid, 'SIGKILL');
        resolve();
      };
      // Settled as they end (a cut stream's rejection is an outcome here, not an unhandled error).
      streams = Array.from({ length: 16 }, (_, k) => stream(c.base, request(k), onFirst).then((value) => ({ value }), (error) => ({ error })));
    });
    const plain = Array.from({ length: 16 }, (_, k) => c.client.completions.create(request(100 + k)));
    await killed;

    // Every non-streaming request completes: the ones the victim held are replayed elsewhere.
    for (const r of await Promise.all(plain)) assert.equal(r.choices[0].finish_reason, 'length');
    // A stream either completes or fails visibly; none hangs (the test's own timeout).
    const outcomes = await Promise.all(streams);
    const failed = outcomes.filter((o) => o.error).length;
    for (const o of outcomes) if (!o.error) assert.equal(o.value.finish, 'length');
    t.diagnostic(`${failed} of 16 streams cut by the kill`);
    assert.ok(failed < 16, 'no stream survived the loss of one replica of three');
    assert.ok(failed > 0, 'the kill cut no stream: it did not happen under load');
    // Two replicas keep serving.
    for (let k = 0; k < 6; k++) assert.ok((await c.client.completions.create({ ...request(200 + k), max_tokens: 4 })).choices[0].text.length > 0);

    restarted = await startServer(['-m', MODEL, ...SERVE_ARGS], { port: victim.port });
    // Back in after its health check: keyed requests hash onto it again.
    let served = 0;
    for (let round = 0; served === 0 && round < 100; round++) {
      await Promise.all(Array.from({ length: 12 }, (_, k) =>
        c.client.completions.create({ ...request(k), max_tokens: 2, prompt_cache_key: `key-${round}-${k}` })));
      served = await finishedOn(victim.port);
    }
    assert.ok(served > 0, 'the restarted replica got no requests');
  });

  test('SIGTERM drains a replica: its requests finish, new ones go elsewhere, it exits 0', { timeout: 120000 }, async () => {
    assert.ok(restarted, 'needs the replica restarted by the previous test');
    const direct = new OpenAI({ apiKey: 'none', baseURL: `${restarted.base}/v1`, maxRetries: 0, timeout: 60000 });
    const request = (k) => ({ model: 'x', prompt: `Drain ${k}`, max_tokens: 200, ...greedy });
    const plain = direct.completions.create(request(0));
    let started = 0;
    const streams = Array.from({ length: 4 }, (_, k) => stream(restarted.base, request(1 + k), () => started++));
    while (started < 4) await sleep(5);
    const t0 = Date.now();
    const exited = restarted.stop();
    // Meanwhile the cluster answers everything, the keys that hash to the draining replica too.
    const during = await Promise.all(Array.from({ length: 12 }, (_, k) =>
      c.client.completions.create({ ...request(10 + k), max_tokens: 4, prompt_cache_key: `drain-${k}` })));
    for (const r of during) assert.ok(r.choices[0].text.length > 0);
    assert.equal((await plain).choices[0].finish_reason, 'length');
    for (const { finish } of await Promise.all(streams)) assert.equal(finish, 'length');
    assert.equal(await exited, 0);
    assert.ok(Date.now() - t0 < 30000, 'the drain outlasted its timeout');
  });
});
