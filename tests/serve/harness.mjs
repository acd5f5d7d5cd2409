// Starts a real `hart serve` on a free loopback port and gives an OpenAI client for it.
// HART (the binary) and HART_TESTDATA come from the environment CTest sets.
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import OpenAI from 'openai';

export const HART = process.env.HART;
export const TESTDATA = process.env.HART_TESTDATA;
export const model = (name) => path.join(TESTDATA, 'models', name);

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

export async function startServer(args, { apiKey = 'none' } = {}) {
  const port = await freePort();
  const proc = spawn(HART, ['serve', '--host', '127.0.0.1', '--port', String(port), '-t', '2', ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  proc.stderr.on('data', (d) => (log += d));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (proc.exitCode !== null) throw new Error(`hart serve exited: ${log}`);
    try {
      const r = await fetch(`${base}/health`);
      if (r.status === 200) break;
    } catch {}
    if (i > 300) throw new Error(`hart serve did not become ready: ${log}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const client = new OpenAI({ apiKey, baseURL: `${base}/v1`, maxRetries: 0, timeout: 60000 });
  return {
    base,
    client,
    log: () => log,
    post: (route, body) =>
      fetch(`${base}${route}`, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body) }),
    stop: () => new Promise((resolve) => {
      proc.on('exit', resolve);
      proc.kill('SIGTERM');
    }),
  };
}

export async function metric(base, name) {
  const text = await (await fetch(`${base}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(name + ' ') || l.startsWith(name + '{'));
  return line ? Number(line.split(' ').pop()) : 0;
}
