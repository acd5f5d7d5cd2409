"""The Python binding against the library and the CLI: the same tokens as `hart tokenize`, the same
greedy tokens as `hart run --temp 0`, the OpenAI dicts of `hart serve`, and errors as exceptions.
Needs HART_TEST_MODEL (stories260K.gguf) and HART_BIN (the hart executable); skips without."""
import base64
import json
import math
import os
import subprocess
import unittest

import hart

MODEL = os.environ.get("HART_TEST_MODEL", "")
HART_BIN = os.environ.get("HART_BIN", "hart")
PROMPT = "Once upon a time"


@unittest.skipUnless(os.path.exists(MODEL), f"test data not found: {MODEL!r} (set HART_TEST_MODEL)")
class ModelTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.m = hart.Model(MODEL, n_ctx=256, n_threads=1)

    @classmethod
    def tearDownClass(cls):
        cls.m.close()

    def hart(self, *args):
        return subprocess.run([HART_BIN, *args], check=True, capture_output=True, text=True).stdout

    def test_tokenize_is_hart_tokenizes(self):
        for text in [PROMPT, "The <s> dog, 42 times!"]:
            want = [int(t) for t in self.hart("tokenize", "-m", MODEL, "--ids", text).split()]
            self.assertEqual(self.m.tokenize(text), want)
        # As llama.cpp, the space SentencePiece puts in front of the text is dropped again.
        self.assertEqual(self.m.detokenize(self.m.tokenize(PROMPT, add_special=False)), PROMPT)

    def test_greedy_generate_is_hart_run(self):
        run = json.loads(self.hart("run", "-m", MODEL, "-p", PROMPT, "-n", "24", "--temp", "0", "--json"))
        text = "".join(self.m.generate(PROMPT, max_tokens=24, temperature=0))
        self.assertEqual(text, run["text"])

    def test_stopping_the_iteration_early(self):
        pieces = self.m.generate(PROMPT, max_tokens=100, temperature=0)
        first = [next(pieces) for _ in range(3)]
        pieces.close()  # cancels the generation
        self.assertEqual(len(first), 3)
        again = list(self.m.generate(PROMPT, max_tokens=3, temperature=0))
        self.assertEqual(again, first)

    def test_pieces_come_as_they_are_computed(self):
        pieces = self.m.generate(PROMPT, max_tokens=100, temperature=0, ignore_eos=True)
        next(pieces)
        # A loop that collected the text first would have computed all 100 tokens by now.
        self.assertLessEqual(self.m.n_generated, 3)
        next(pieces)
        after_two = self.m.n_generated
        pieces.close()  # frees the generation: nothing more is computed
        self.assertLess(after_two, 10)
        self.assertEqual(self.m.n_generated, after_two)

    def test_streamed_chat_chunks_come_as_they_are_made(self):
        chunks = self.m.create_chat_completion([{"role": "user", "content": "Once"}], max_tokens=80, stream=True)
        first = next(chunks)
        self.assertEqual(first["object"], "chat.completion.chunk")
        chunks.close()  # cancels the request; the engine goes on with the next
        r = self.m.create_completion(PROMPT, max_tokens=4, temperature=0)
        self.assertEqual(r["choices"][0]["finish_reason"], "length")

    def test_json_schema_constrains_generate(self):
        text = "".join(self.m.generate(PROMPT, max_tokens=10, seed=3, json_schema={"enum": ["cat", "dog"]}))
        self.assertIn(text.strip(), ['"cat"', '"dog"'])

    def test_chat_completion_is_the_openai_dict(self):
        r = self.m.create_chat_completion([{"role": "user", "content": "Once"}], max_tokens=8, temperature=0,
                                          response_format={"type": "json_object"})
        self.assertEqual(r["object"], "chat.completion")
        self.assertEqual(r["choices"][0]["message"]["role"], "assistant")
        self.assertIn(r["choices"][0]["finish_reason"], ["stop", "length"])
        self.assertTrue(0 < r["usage"]["completion_tokens"] <= 8)
        chunks = list(self.m.create_completion(PROMPT, max_tokens=4, temperature=0, stream=True))
        self.assertEqual(chunks[0]["object"], "text_completion")
        with self.assertRaises(hart.HartError) as e:
            self.m.create_chat_completion([], max_tokens=4)
        self.assertEqual(e.exception.status, "HART_ERR_INVALID_ARGUMENT")
        self.assertIn("messages", str(e.exception))

    def test_embed_is_a_unit_vector(self):
        v = self.m.embed(PROMPT)
        self.assertEqual(len(v), self.m.n_embd)
        self.assertAlmostEqual(math.sqrt(sum(x * x for x in v)), 1.0, places=4)

    def test_chat_template(self):
        self.assertEqual(self.m.apply_chat_template([{"role": "user", "content": "Hi"}]),
                         "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")


VISION = os.environ.get("HART_VISION_FIXTURES", "")


@unittest.skipUnless(os.path.isdir(VISION), "no vision fixtures (set HART_VISION_FIXTURES to a folder vision_fixtures wrote)")
class VisionTest(unittest.TestCase):
    def test_image_url_part_is_hart_run_image(self):
        text, mmproj, image = (os.path.join(VISION, f) for f in ("text.gguf", "mmproj.gguf", "image.png"))
        with open(image, "rb") as f:
            url = "data:image/png;base64," + base64.b64encode(f.read()).decode()
        with hart.Model(text, n_ctx=512, n_threads=1, mmproj=mmproj) as m:
            prompt = m.apply_chat_template([{"role": "user", "content": "<__media__>What is it?"}])
            want = subprocess.run([HART_BIN, "run", "-m", text, "--mmproj", mmproj, "--image", image, "-p", prompt, "-n", "8",
                                   "--temp", "0"], check=True, capture_output=True, text=True).stdout
            r = m.create_chat_completion([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}},
                                                                      {"type": "text", "text": "What is it?"}]}],
                                         max_tokens=8, temperature=0)
            self.assertEqual(r["choices"][0]["message"]["content"], want.removesuffix("\n"))
        with hart.Model(text, n_ctx=512, n_threads=1) as m:  # no projector: refused
            with self.assertRaises(hart.HartError) as e:
                m.create_chat_completion([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}],
                                         max_tokens=2)
            self.assertIn("--mmproj", str(e.exception))
        with self.assertRaises(hart.HartError) as e:  # a file that is not a projector
            hart.Model(text, n_ctx=512, n_threads=1, mmproj=text).create_completion("x", max_tokens=1)
        self.assertEqual(e.exception.status, "HART_ERR_INVALID_ARGUMENT")


class ErrorTest(unittest.TestCase):
    def test_bad_path_raises_with_the_library_message(self):
        with self.assertRaises(hart.HartError) as e:
            hart.Model("/nonexistent/model.gguf")
        self.assertEqual(e.exception.status, "HART_ERR_BAD_FILE")
        self.assertIn("/nonexistent/model.gguf", str(e.exception))

    def test_version(self):
        self.assertRegex(hart.version(), r"^\d+\.\d+\.\d+$")


if __name__ == "__main__":
    unittest.main()
