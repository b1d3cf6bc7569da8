"""A small OpenAI-compatible server on 127.0.0.1 for tests: both endpoints, logprobs, faults.

It speaks the OpenAI API and, with ``dialect=``, the OpenAI-compatible
servers of the serving engines as they differ from it: ``"vllm"`` (extra
fields per choice, completions ``top_logprobs`` as token → logprob maps, no
system fingerprint), ``"tgi"`` (text-generation-inference: its own model
name and fingerprint, and ``echo`` refused with 422 in its error shape) and
``"llamacpp"`` (llama.cpp's server: the loaded model's file name as the
model, completions logprobs in the chat shape, ``echo`` refused with 400).

It serves ``/v1/chat/completions`` and ``/v1/completions`` with usage and
logprobs in the shapes the official client parses, checks the bearer key,
and can be told to answer 429 (with ``Retry-After``), 500, to stall, or to
answer 200 with a malformed body (not JSON, HTML, JSON of the wrong shape,
or cut short). Every
request is logged (path, a hash of its body, the status sent) so tests can
check that no completed request was sent twice. The key is checked, never
logged.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

VOCABULARY = ("yes", "no", "maybe", "A", "B", "C")
DIALECTS = ("openai", "vllm", "tgi", "llamacpp")


def body_hash(body: dict) -> str:
    """The SHA-256 of a request body as canonical JSON."""
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def _number(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


def default_answer(model: str, prompt: str) -> str:
    """A deterministic answer: 'yes' or 'no', from a hash of the model and prompt."""
    return ("yes", "no")[_number(model + "\0" + prompt) % 2]


def _tokens(text: str) -> list[str]:
    return re.findall(r"\s*\S+|\s+$", text) if text else []


def _logprob(token: str) -> float:
    return -0.01 - (_number(token) % 1000) / 400.0


class FakeOpenAI:
    """The server. ``start()`` returns its base URL (``http://127.0.0.1:PORT/v1``).

    Parameters
    ----------
    api_key : str
        The only bearer key accepted; others get 401.
    responder : callable, optional
        ``responder(endpoint, body) -> str``, the completion text; by default
        :func:`default_answer` of the model and the prompt.
    dialect : {"openai", "vllm", "tgi", "llamacpp"}
        Whose OpenAI-compatible server to imitate (see the module docstring).
    """

    def __init__(self, api_key: str, responder=None, dialect: str = "openai"):
        if dialect not in DIALECTS:
            raise ValueError(f"dialect {dialect!r} is not one of {DIALECTS}")
        self.api_key = api_key
        self.responder = responder
        self.dialect = dialect
        self.log: list[dict] = []
        self.faults: deque = deque()
        self.stall_after: int | None = None
        self.lock = threading.Lock()
        self.released = threading.Event()
        self._server: ThreadingHTTPServer | None = None

    # programming faults -------------------------------------------------------------------
    def fail(self, status: int, times: int = 1, retry_after: str | None = None) -> None:
        """Answer the next ``times`` requests with ``status`` (and a Retry-After header)."""
        with self.lock:
            self.faults.extend([("status", status, retry_after)] * times)

    def corrupt(self, kind: str, times: int = 1) -> None:
        """Answer the next ``times`` requests 200 with a malformed body.

        ``kind``: ``"json"`` (cut mid-object), ``"html"`` (a text/html page),
        ``"shape"`` (JSON without choices) or ``"truncated"`` (the connection
        closes before the announced length).
        """
        with self.lock:
            self.faults.extend([("corrupt", kind, None)] * times)

    def stall(self, times: int = 1, seconds: float = 30.0) -> None:
        """Hold the next ``times`` requests for ``seconds`` and close them unanswered."""
        with self.lock:
            self.faults.extend([("stall", seconds, None)] * times)

    def completed(self) -> list[str]:
        """Body hashes of the requests answered 200, in order."""
        with self.lock:
            return [entry["body"] for entry in self.log if entry["status"] == 200]

    # serving ------------------------------------------------------------------------------
    def start(self) -> str:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                fake._handle(self, body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        # a client killed mid-request resets its connection; that is expected here
        self._server.handle_error = lambda request, address: None
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def stop(self) -> None:
        self.released.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def _send(self, handler, status: int, payload: dict, headers: dict | None = None) -> None:
        data = json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)
        handler.wfile.flush()

    def _corrupt(self, handler, kind: str) -> None:
        data = {
            "json": b'{"id": "chatcmpl-fake", "choices": [{"index": 0, "mess',
            "html": b"<html><body>502 Bad Gateway</body></html>",
            "shape": json.dumps({"id": "x", "object": "chat.completion"}).encode(),
            "truncated": json.dumps({"id": "x", "choices": []}).encode(),
        }[kind]
        handler.send_response(200)
        handler.send_header("Content-Type", "text/html" if kind == "html" else "application/json")
        extra = 64 if kind == "truncated" else 0
        handler.send_header("Content-Length", str(len(data) + extra))
        handler.end_headers()
        handler.wfile.write(data)
        handler.wfile.flush()
        if kind == "truncated":
            handler.close_connection = True

    def _record(self, path: str, body: dict, status: int) -> None:
        with self.lock:
            self.log.append(
                {"path": path, "body": body_hash(body), "status": status, "time": time.monotonic()}
            )

    def _handle(self, handler, body: dict) -> None:
        path = handler.path
        given = handler.headers.get("Authorization", "")
        if given != f"Bearer {self.api_key}":
            self._record(path, body, 401)
            # as the real API does, the message quotes the key it was given
            return self._send(
                handler,
                401,
                {
                    "error": {
                        "message": f"Incorrect API key provided: {given.removeprefix('Bearer ')}.",
                        "type": "invalid_request_error",
                        "code": "invalid_api_key",
                    }
                },
            )
        with self.lock:
            fault = self.faults.popleft() if self.faults else None
            done = sum(1 for entry in self.log if entry["status"] == 200)
        if fault is None and self.stall_after is not None and done >= self.stall_after:
            fault = ("stall", 600.0, None)
        if fault is not None and fault[0] == "corrupt":
            self._record(path, body, "corrupt")
            return self._corrupt(handler, fault[1])
        if fault is not None and fault[0] == "stall":
            self._record(path, body, 0)
            self.released.wait(fault[1])
            handler.close_connection = True
            return None
        if fault is not None:
            _, status, retry_after = fault
            self._record(path, body, status)
            headers = {"Retry-After": retry_after} if retry_after is not None else {}
            return self._send(
                handler,
                status,
                {"error": {"message": f"injected {status}", "type": "server_error", "code": None}},
                headers,
            )
        refused = self._refusal(path, body)
        if refused is not None:
            self._record(path, body, refused[0])
            return self._send(handler, *refused)
        if path == "/v1/chat/completions":
            payload = self._chat(body)
        elif path == "/v1/completions":
            payload = self._completion(body)
        else:
            self._record(path, body, 404)
            return self._send(
                handler,
                404,
                {"error": {"message": f"no route {path}", "type": "invalid_request_error"}},
            )
        if body.get("model") == "missing-model":
            self._record(path, body, 404)
            return self._send(
                handler,
                404,
                {
                    "error": {
                        "message": "The model `missing-model` does not exist",
                        "type": "invalid_request_error",
                        "code": "model_not_found",
                    }
                },
            )
        self._record(path, body, 200)
        return self._send(handler, 200, self._dialect(path, body, payload))

    def _refusal(self, path: str, body: dict):
        """What TGI and llama.cpp answer to an ``echo`` completion: an error in their shape."""
        if path != "/v1/completions" or not body.get("echo"):
            return None
        if self.dialect == "tgi":
            return 422, {
                "error": "Input validation error: `echo` is not supported",
                "error_type": "validation",
            }
        if self.dialect == "llamacpp":
            return 400, {
                "error": {
                    "code": 400,
                    "message": "Only no echo is supported",
                    "type": "invalid_request_error",
                }
            }
        return None

    def _dialect(self, path: str, body: dict, payload: dict) -> dict:
        """The OpenAI payload as the imitated server shapes it."""
        if self.dialect == "vllm":
            payload.pop("system_fingerprint", None)
            for choice in payload["choices"]:
                choice["stop_reason"] = None
                logprobs = choice.get("logprobs")
                if path == "/v1/completions" and logprobs and int(body.get("logprobs") or 0):
                    logprobs["top_logprobs"] = [
                        None if v is None else {t: v}
                        for t, v in zip(logprobs["tokens"], logprobs["token_logprobs"], strict=True)
                    ]
            payload["prompt_logprobs"] = None
        elif self.dialect == "tgi":
            payload["model"] = "tgi"
            payload["system_fingerprint"] = "3.0.1-native"
        elif self.dialect == "llamacpp":
            payload["model"] = "local-model.gguf"
            payload["system_fingerprint"] = "b4500-fake"
            for choice in payload["choices"]:
                logprobs = choice.get("logprobs")
                if path == "/v1/completions" and logprobs:
                    choice["logprobs"] = {
                        "content": [
                            {
                                "token": t,
                                "logprob": v,
                                "bytes": list(t.encode()),
                                "top_logprobs": [],
                            }
                            for t, v in zip(
                                logprobs["tokens"], logprobs["token_logprobs"], strict=True
                            )
                        ]
                    }
        return payload

    def _text(self, endpoint: str, body: dict, prompt: str) -> str:
        if self.responder is not None:
            return self.responder(endpoint, body)
        return default_answer(body.get("model", ""), prompt)

    def _chat(self, body: dict) -> dict:
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        text = self._text("chat", body, prompt)
        logprobs = None
        if body.get("logprobs"):
            top = int(body.get("top_logprobs") or 0)
            content = []
            for token in _tokens(text):
                alternatives = [token] + [t for t in VOCABULARY if t != token.strip()]
                content.append(
                    {
                        "token": token,
                        "logprob": _logprob(token),
                        "bytes": list(token.encode()),
                        "top_logprobs": [
                            {
                                "token": t,
                                "logprob": _logprob(token) - 0.5 * i,
                                "bytes": list(t.encode()),
                            }
                            for i, t in enumerate(alternatives[:top])
                        ],
                    }
                )
            logprobs = {"content": content, "refusal": None}
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", ""),
            "system_fingerprint": "fp_fake",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "logprobs": logprobs,
                    "message": {"role": "assistant", "content": text},
                }
            ],
            "usage": {
                "prompt_tokens": len(_tokens(prompt)),
                "completion_tokens": len(_tokens(text)),
                "total_tokens": len(_tokens(prompt)) + len(_tokens(text)),
            },
        }

    def _completion(self, body: dict) -> dict:
        prompt = str(body.get("prompt", ""))
        text = "" if body.get("max_tokens") == 0 else self._text("completions", body, prompt)
        full = prompt + text if body.get("echo") else text
        logprobs = None
        if body.get("logprobs") is not None:
            tokens = _tokens(full)
            offsets, position = [], 0
            for token in tokens:
                offsets.append(position)
                position += len(token)
            values = [_logprob(t) for t in tokens]
            if body.get("echo") and values:
                values[0] = None
            logprobs = {
                "tokens": tokens,
                "token_logprobs": values,
                "text_offset": offsets,
                "top_logprobs": None,
            }
        return {
            "id": "cmpl-fake",
            "object": "text_completion",
            "created": 0,
            "model": body.get("model", ""),
            "choices": [{"index": 0, "text": full, "finish_reason": "stop", "logprobs": logprobs}],
            "usage": {
                "prompt_tokens": len(_tokens(prompt)),
                "completion_tokens": len(_tokens(text)),
                "total_tokens": len(_tokens(prompt)) + len(_tokens(text)),
            },
        }
