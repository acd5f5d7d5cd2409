"""Greedy text from a prompt with hart's Python binding (pip install ./bindings/python)."""
import sys

import hart

prompt = "Once upon a time"
with hart.Model(sys.argv[1] if len(sys.argv) > 1 else "stories260K.gguf") as m:
    print(prompt, end="")
    for piece in m.generate(prompt, max_tokens=32, temperature=0):
        print(piece, end="", flush=True)
    print()
    # The same engine as `hart serve`, in process: an OpenAI response dict.
    reply = m.create_chat_completion([{"role": "user", "content": "Tell me a story."}], max_tokens=16, temperature=0)
    print(reply["choices"][0]["message"]["content"], file=sys.stderr)
