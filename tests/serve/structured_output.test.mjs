// End-to-end: structured output (response_format, json_schema, grammar) on the random-weight
// qwen3 model with its real 151936-token vocabulary. Random weights make the model's own
// choices arbitrary, so every well-formed result comes from the constraint alone.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Ajv from 'ajv';
import { model, startServer } from './harness.mjs';

// Bounded strings and arrays: a random model would otherwise rarely close a string.
const person = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 12 },
    age: { type: 'integer', minimum: 0, maximum: 120 },
    born: { type: 'string', format: 'date' },
    code: { type: 'string', pattern: '^[A-Z]{2}-\\d{3}$' },
    color: { enum: ['red', 'green', 'blue'] },
    tags: { type: 'array', items: { type: 'string', maxLength: 6 }, maxItems: 3 },
    ok: { type: 'boolean' },
    nick: { anyOf: [{ type: 'string', maxLength: 4 }, { type: 'null' }] },
    home: { $ref: '#/$defs/place' },
  },
  required: ['name', 'age', 'born', 'code', 'color', 'tags', 'ok', 'home'],
  additionalProperties: false,
  $defs: { place: { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' } }, required: ['x'] } },
};

const messages = [{ role: 'user', content: 'Describe a person as JSON.' }];

describe('structured output, qwen3-tiny', () => {
  let s;
  before(async () => (s = await startServer(['-m', model('qwen3-tiny-Q8_0.gguf'), '-c', '2048'])));
  after(async () => s.stop());

  test('json_schema output parses and validates for 10 seeds', async () => {
    // RFC 3339's full-date (ajv's own formats live in another package).
    const date = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;
    const validate = new Ajv({ formats: { date } }).compile(person);
    const texts = new Set();
    for (let seed = 1; seed <= 10; seed++) {
      const r = await s.client.chat.completions.create({
        model: 'x', messages, seed, temperature: 1, max_tokens: 600,
        response_format: { type: 'json_schema', json_schema: { name: 'person', schema: person, strict: true } },
      });
      const text = r.choices[0].message.content;
      assert.equal(r.choices[0].finish_reason, 'stop', text);
      const value = JSON.parse(text);
      assert.ok(validate(value), `${text}: ${JSON.stringify(validate.errors)}`);
      texts.add(text);
    }
    assert.ok(texts.size > 1, 'different seeds give different outputs');
  });

  test('a bare schema (llama-server json_schema field) on completions, streamed', async () => {
    const schema = { type: 'array', items: { enum: [1, 2, 3] }, minItems: 2, maxItems: 4 };
    const st = await s.client.completions.create({ model: 'x', prompt: 'Numbers:', seed: 7, max_tokens: 200, stream: true,
                                                   json_schema: schema });
    let text = '', finish = null;
    for await (const c of st) {
      text += c.choices[0]?.text ?? '';
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    assert.equal(finish, 'stop');
    assert.ok(new Ajv().compile(schema)(JSON.parse(text)), text);
  });

  // A generic object has unbounded strings, which random weights may never close: a result cut
  // by max_tokens is honest ("length"); every finished one must be a JSON object.
  test('json_object output parses as an object', async () => {
    let finished = 0;
    for (let seed = 1; seed <= 10; seed++) {
      const r = await s.client.chat.completions.create({ model: 'x', messages, seed, max_tokens: 200,
                                                        response_format: { type: 'json_object' } });
      const { content } = r.choices[0].message;
      if (r.choices[0].finish_reason === 'length') continue;
      assert.equal(r.choices[0].finish_reason, 'stop');
      const value = JSON.parse(content);
      assert.ok(typeof value === 'object' && value !== null && !Array.isArray(value), content);
      finished++;
    }
    assert.ok(finished >= 1, 'none of 10 finished');
  });

  test('a GBNF grammar field', async () => {
    const r = await s.client.completions.create({ model: 'x', prompt: 'Answer:', seed: 5, max_tokens: 50,
                                                 grammar: 'root ::= ("yes" | "no") "." [0-9]{2}' });
    assert.match(r.choices[0].text, /^(yes|no)\.[0-9]{2}$/);
    assert.equal(r.choices[0].finish_reason, 'stop');
  });

  test('unsupported schema keywords, malformed grammars and formats are 400s', async () => {
    const cases = [
      [{ response_format: { type: 'json_schema', json_schema: { name: 'n', schema: { type: 'array', uniqueItems: true } } } },
       'response_format', /uniqueItems/],
      [{ response_format: { type: 'json_schema', json_schema: { name: 'n', schema: { type: 'string', pattern: '^(a)\\1$' } } } },
       'response_format', /pattern/],
      [{ grammar: 'root ::= "unterminated' }, 'grammar', /1:23: unterminated string literal/],
      [{ grammar: 'root ::= item' }, 'grammar', /'item' is used but never defined/],
      [{ response_format: { type: 'xml' } }, 'response_format', /json_schema/],
      [{ response_format: { type: 'json_object' }, grammar: 'root ::= "x"' }, 'grammar', /only one of/],
    ];
    for (const [extra, param, message] of cases) {
      const r = await s.post('/v1/chat/completions', { messages, max_tokens: 8, ...extra });
      assert.equal(r.status, 400, JSON.stringify(extra));
      const { error } = await r.json();
      assert.equal(error.type, 'invalid_request_error');
      assert.equal(error.param, param);
      assert.match(error.message, message);
      assert.equal(error.code, null);
    }
    await assert.rejects(s.client.chat.completions.create({ model: 'x', messages, response_format: {
      type: 'json_schema', json_schema: { name: 'n', schema: { not: { type: 'string' } } } } }),
                         (e) => e.status === 400 && /unsupported keyword 'not'/.test(e.message));
  });

  test('max_tokens before the grammar completes is finish_reason length', async () => {
    const r = await s.client.chat.completions.create({ model: 'x', messages, seed: 1, max_tokens: 3,
                                                      response_format: { type: 'json_schema', json_schema: { name: 'p', schema: person } } });
    assert.equal(r.choices[0].finish_reason, 'length');
  });
});
