// Greedy text from a prompt with hart's Node binding (npm install ./bindings/node).
import hart from 'hart';

const prompt = 'Once upon a time';
const m = await hart.Model.load(process.argv[2] ?? 'stories260K.gguf');
process.stdout.write(prompt);
for await (const piece of m.generate(prompt, { maxTokens: 32, temperature: 0 })) process.stdout.write(piece);
process.stdout.write('\n');
// The same engine as `hart serve`, in process: an OpenAI response object.
const reply = await m.createChatCompletion({ messages: [{ role: 'user', content: 'Tell me a story.' }], max_tokens: 16, temperature: 0 });
console.error(reply.choices[0].message.content);
