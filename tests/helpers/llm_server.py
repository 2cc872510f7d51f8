"""A scripted OpenAI-compatible chat completions server on 127.0.0.1, for the judge tests and benchmark.

`LLMServer` runs `http.server.ThreadingHTTPServer` (HTTP/1.1, kept-alive connections) in a thread, on a free
port. Each POST to ``/v1/chat/completions`` is recorded (`Seen`) and answered by ``script(body, attempt)``,
where ``attempt`` counts the requests seen so far with the same prompt (1 for the first): the script returns
an `Answer` (a status, headers, a delay, and the choices' contents or a raw body). The default script
answers ``{"grade": 2, "reason": "scripted"}`` for every choice asked (``n`` honoured).

Real reply shapes: `fixture` reads a body kept in ``tests/fixtures/llm/`` (each with its source in
``SOURCES.md``), `with_texts` replaces the text of message fields the body already has (and nothing else),
and `replay` sends a body with its real status and headers.

Run as a script it serves in its own process (for the benchmark): ``python tests/helpers/llm_server.py --delay
0.05`` prints ``port N`` once listening, and answers every request after the delay with the grade given by the
document's length modulo 4. With ``--shapes`` it replays the fixtures instead (to try the CLI by hand): a
request with ``max_tokens`` gets OpenAI's refusal of it; otherwise the prompt's hash picks a reasoning reply
(``<think>`` in content, the answer in ``reasoning_content``), a cut reply, a filtered one or an error in a
200 body; ``--rate-limit-after N`` answers Groq's daily 429 (``Retry-After: 1439``) after N requests.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

PATH = "/v1/chat/completions"
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "llm"


@dataclass(frozen=True)
class Answer:
    """What the server sends back for one request."""

    status: int = 200
    contents: tuple[str, ...] = ('{"grade": 2, "reason": "scripted"}',)
    raw: bytes | None = None  # sent as the body instead of a chat completion
    headers: tuple[tuple[str, str], ...] = ()
    delay_s: float = 0.0
    hang_up: bool = False  # close the connection after answering, without saying so (an idle timeout)
    prompt_tokens: int = 11
    completion_tokens: int = 7


def reply(*contents: str, **options: Any) -> Answer:
    """A 200 chat completion with one choice per content."""
    return Answer(contents=contents, **options)


def error(status: int, *, retry_after: str | None = None, body: bytes = b'{"error": "scripted"}') -> Answer:
    headers = (("Retry-After", retry_after),) if retry_after is not None else ()
    return Answer(status=status, raw=body, headers=headers)


def fixture(name: str) -> Any:
    """A reply body (or part of one) kept in tests/fixtures/llm/, as JSON."""
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def with_texts(body: Any, choice: int = 0, **texts: str | None) -> Any:
    """A copy of a chat completion body with the text of existing message fields replaced (``content``,
    ``reasoning_content``, ``reasoning``, ``refusal``); a field the body does not have is an error, so the
    shape stays the source's."""
    out = copy.deepcopy(body)
    message = out["choices"][choice]["message"]
    for key, text in texts.items():
        if key not in message:
            raise KeyError(f"the fixture's message has no field {key!r}: {sorted(message)}")
        message[key] = text
    return out


def replay(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Answer:
    """An answer sending ``body`` (JSON) with this status and these headers."""
    data = body if isinstance(body, bytes) else json.dumps(body, ensure_ascii=False).encode("utf-8")
    return Answer(status=status, raw=data, headers=tuple((headers or {}).items()))


def prompt_of(body: dict[str, Any]) -> str:
    """The user message of a request body."""
    return str(body["messages"][-1]["content"])


def honour_n(body: dict[str, Any], attempt: int) -> Answer:
    """The default script: grade 2 for each of the ``n`` choices asked."""
    return Answer(contents=('{"grade": 2, "reason": "scripted"}',) * int(body.get("n") or 1))


@dataclass(frozen=True)
class Seen:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None
    raw: bytes
    at: float


@dataclass
class LLMServer:
    """The server (see the module doc); a context manager."""

    script: Callable[[dict[str, Any], int], Answer] = honour_n
    seen: list[Seen] = field(default_factory=list)
    _attempts: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._httpd = _Server(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05})

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> LLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> LLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def prompts(self) -> list[str]:
        """The prompt of every request seen, in arrival order."""
        with self._lock:
            return [prompt_of(s.body) for s in self.seen if s.body is not None]

    def answer(self, path: str, headers: dict[str, str], raw: bytes) -> Answer:
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        with self._lock:
            self.seen.append(Seen(path=path, headers=headers, body=body, raw=raw, at=time.monotonic()))
            if body is None:
                return Answer(status=400, raw=b'{"error": "request body is not JSON"}')
            key = prompt_of(body)
            self._attempts[key] = attempt = self._attempts.get(key, 0) + 1
        return self.script(body, attempt)


def completion(answer: Answer, model: str) -> bytes:
    """The chat completion JSON of ``answer``."""
    choices = [
        {"index": i, "message": {"role": "assistant", "content": c}, "finish_reason": "stop"}
        for i, c in enumerate(answer.contents)
    ]
    usage = {
        "prompt_tokens": answer.prompt_tokens,
        "completion_tokens": answer.completion_tokens,
        "total_tokens": answer.prompt_tokens + answer.completion_tokens,
    }
    body = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": choices,
        "usage": usage,
    }
    return json.dumps(body).encode("utf-8")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # 16 clients connecting at once must not overflow the listen backlog


def _handler(server: LLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed-ACK stall

        def do_POST(self) -> None:  # noqa: N802 - the http.server API
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path != PATH:
                self._send(Answer(status=404, raw=b'{"error": "not found"}'), b"")
                return
            answer = server.answer(self.path, dict(self.headers.items()), raw)
            if answer.delay_s:
                time.sleep(answer.delay_s)
            self._send(answer, raw)
            if answer.hang_up:
                self.close_connection = True

        def _send(self, answer: Answer, raw: bytes) -> None:
            if answer.raw is not None:
                data = answer.raw
            else:
                try:
                    model = str(json.loads(raw).get("model", ""))
                except (ValueError, AttributeError):
                    model = ""
                data = completion(answer, model)
            try:
                self.send_response(answer.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in answer.headers:
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
                self.close_connection = True

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def _benchmark_script(delay: float) -> Callable[[dict[str, Any], int], Answer]:
    def script(body: dict[str, Any], attempt: int) -> Answer:
        grade = len(prompt_of(body)) % 4
        text = json.dumps({"grade": grade, "reason": "loopback"})
        return Answer(contents=(text,) * int(body.get("n") or 1), delay_s=delay)

    return script


def _shapes_script(rate_limit_after: int | None) -> Callable[[dict[str, Any], int], Answer]:
    seen = [0]
    lock = threading.Lock()

    def script(body: dict[str, Any], attempt: int) -> Answer:
        with lock:
            seen[0] += 1
            count = seen[0]
        if rate_limit_after is not None and count > rate_limit_after:
            return replay(fixture("groq_rate_limit_tpd.json"), 429, {"Retry-After": "1439"})
        if "max_tokens" in body:
            return replay(fixture("openai_max_tokens_unsupported.json"), 400)
        grade = len(prompt_of(body)) % 4
        pick = sum(prompt_of(body).encode()) % 5
        if pick == 0:
            think = fixture("vllm_think_in_content.json")
            text = think["choices"][0]["message"]["content"]
            content = text[: text.index("</think>") + 8] + f'\n\n{{"grade": {grade}, "reason": "replayed"}}'
            return replay(with_texts(think, content=content))
        if pick == 1:
            answer = f'{{"grade": {grade}, "reason": "in reasoning_content"}}'
            return replay(
                with_texts(fixture("vllm_answer_in_reasoning_content.json"), reasoning_content=answer)
            )
        if pick == 2:
            return replay(fixture("llamacpp_finish_length.json"))
        if pick == 3:
            return replay(fixture("azure_content_filter.json"))
        return replay(fixture("openrouter_provider_error.json"))

    return script


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--delay", type=float, default=0.05, help="seconds before each answer")
    parser.add_argument("--shapes", action="store_true", help="replay the fixtures' shapes and failures")
    parser.add_argument("--rate-limit-after", type=int, default=None, metavar="N")
    args = parser.parse_args(argv)
    script = _shapes_script(args.rate_limit_after) if args.shapes else _benchmark_script(args.delay)
    server = LLMServer(script=script)
    print(f"port {server.port}", flush=True)
    server._httpd.serve_forever()  # in the main thread, until killed


if __name__ == "__main__":
    main(sys.argv[1:])
