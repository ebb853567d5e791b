"""A dependency-free Python client for the Base Context daemon.

Spawns ``base-context serve`` and speaks JSON-RPC 2.0 over its stdio with LSP framing
(``Content-Length: N\\r\\n\\r\\n`` + N bytes of UTF-8 JSON). Standard library only.

    from base_context_client import BaseContextClient, BaseContextError

    with BaseContextClient() as client:
        client.initialize(project_dir="/home/me/project")
        session = client.request("session/create", {"cwd": "/home/me/project"})["session"]
        ...
    # leaving the block sends shutdown + exit and waits for the daemon to end

Requests block until the reply arrives (any thread may send them). Errors come back as
``BaseContextError`` with the JSON-RPC ``code``, ``message`` and ``data`` (``data["code"]`` is a
stable string such as ``"session_not_found"``). Notifications (``compaction/didEnd``, ...) go to
handlers registered with ``on_notification`` and are also kept for ``wait_for_notification``.
The method names and shapes are in docs/protocol.md.

The daemon may ask the client's own model to write its summaries (``model/complete``): offer it
with ``offer_model(handler)`` before ``initialize``. The handler gets the request's params and a
``threading.Event`` set when the daemon cancels the request, and returns ``{"text": ...}``
(optionally ``"model"`` and ``"usage"``); raising ``BaseContextError`` answers with that error,
and the daemon falls back to its own summarizer.
"""

from __future__ import annotations

import itertools
import json
import os
import shlex
import subprocess
import threading
from collections import deque
from typing import Any, Callable, Deque, Dict, IO, List, Optional, Tuple

PROTOCOL_VERSION = "1"
# JSON-RPC codes a client may want to switch on (the full table is in docs/protocol.md).
REQUEST_CANCELLED = -32800
SERVER_NOT_INITIALIZED = -32002
METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603
REQUEST_FAILED = -32803

NotificationHandler = Callable[[Dict[str, Any]], None]
# A request from the daemon: (params, cancelled) -> result. `cancelled` is set on $/cancelRequest.
RequestHandler = Callable[[Dict[str, Any], threading.Event], Any]


class BaseContextError(Exception):
    """A JSON-RPC error reply (or a broken connection, with code None)."""

    def __init__(self, code: Optional[int], message: str, data: Any = None):
        super().__init__(f"{code}: {message}" if code is not None else message)
        self.code = code
        self.message = message
        self.data = data

    @property
    def data_code(self) -> Optional[str]:
        """The stable ``data.code`` string, e.g. ``"session_not_found"``."""
        return self.data.get("code") if isinstance(self.data, dict) else None


class _Pending:
    """A request waiting for its reply."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: Any = None
        self.error: Optional[BaseContextError] = None


def default_command() -> List[str]:
    """``$BASE_CONTEXT_COMMAND`` (split like a shell would), else ``base-context serve``."""
    configured = os.environ.get("BASE_CONTEXT_COMMAND")
    return shlex.split(configured) if configured else ["base-context", "serve"]


class BaseContextClient:
    def __init__(
        self,
        command: Optional[List[str]] = None,
        env: Optional[Dict[str, str]] = None,
        cwd: Optional[str] = None,
        stderr: Optional[IO[bytes]] = None,
    ) -> None:
        """Starts the daemon. Its log (stderr) goes to ``stderr``, by default this process's stderr."""
        argv = command or default_command()
        try:
            self._process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                env=env,
                cwd=cwd,
            )
        except FileNotFoundError:
            raise BaseContextError(
                None,
                f"cannot start the daemon: {argv[0]!r} is not on the PATH. From a clone of Base Context, put it there "
                "with: (cd packages/daemon && npm link); or set BASE_CONTEXT_COMMAND to the command that starts it, "
                "e.g. 'node /path/to/clone/packages/daemon/bin/base-context.js serve'",
            ) from None
        self._ids = itertools.count(1)
        self._pending: Dict[int, _Pending] = {}
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._handlers: Dict[str, List[NotificationHandler]] = {}
        self._request_handlers: Dict[str, RequestHandler] = {}
        self._incoming: Dict[Any, threading.Event] = {}
        self._notifications: Deque[Tuple[str, Dict[str, Any]]] = deque(maxlen=1000)
        self._notified = threading.Condition()
        self._closed_reason: Optional[str] = None
        self._reader = threading.Thread(target=self._read_loop, name="base-context-reader", daemon=True)
        self._reader.start()

    # ---- requests and notifications -------------------------------------------------------------

    def request(self, method: str, params: Optional[Dict[str, Any]] = None, timeout: Optional[float] = 120.0) -> Any:
        """Sends a request and waits for its result; raises BaseContextError on an error reply."""
        request_id = next(self._ids)
        pending = _Pending()
        with self._lock:
            if self._closed_reason is not None:
                raise BaseContextError(None, f"the daemon is gone: {self._closed_reason}")
            self._pending[request_id] = pending
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}})
        if not pending.done.wait(timeout):
            with self._lock:
                self._pending.pop(request_id, None)
            self._send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": request_id}})
            raise BaseContextError(REQUEST_CANCELLED, f"{method}: no reply within {timeout} s (cancelled)")
        if pending.error is not None:
            raise pending.error
        return pending.result

    def notify(self, method: str, params: Optional[Dict[str, Any]] = None) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params or {}})

    def on_notification(self, method: str, handler: NotificationHandler) -> None:
        """Calls ``handler(params)`` for each ``method`` notification (on the reader thread: keep it short)."""
        self._handlers.setdefault(method, []).append(handler)

    def on_request(self, method: str, handler: RequestHandler) -> None:
        """Answers the daemon's ``method`` requests with ``handler(params, cancelled)``, each on a thread of its own."""
        self._request_handlers[method] = handler

    def offer_model(self, handler: RequestHandler) -> None:
        """Answers ``model/complete`` with your model; ``initialize`` then offers it to the daemon."""
        self.on_request("model/complete", handler)

    def wait_for_notification(self, method: str, timeout: float = 10.0) -> Dict[str, Any]:
        """The oldest received ``method`` notification not waited for yet (waits up to ``timeout`` s)."""
        with self._notified:
            while True:
                for index, (name, params) in enumerate(self._notifications):
                    if name == method:
                        del self._notifications[index]
                        return params
                if not self._notified.wait(timeout):
                    raise TimeoutError(f"no {method} notification within {timeout} s")

    # ---- lifecycle ------------------------------------------------------------------------------

    def initialize(self, project_dir: Optional[str] = None, client_name: str = "python-client") -> Dict[str, Any]:
        """``initialize`` + ``initialized``: the handshake every connection starts with."""
        params: Dict[str, Any] = {
            "protocolVersion": PROTOCOL_VERSION,
            "processId": os.getpid(),
            "clientInfo": {"name": client_name},
        }
        if project_dir is not None:
            params["projectDir"] = project_dir
        if "model/complete" in self._request_handlers:
            params["capabilities"] = {"model": {"complete": True}}
        result = self.request("initialize", params)
        self.notify("initialized", {})
        return result

    def shutdown(self, timeout: float = 10.0) -> int:
        """``shutdown`` + ``exit``; waits for the daemon to end and returns its exit code (0 = clean)."""
        self.request("shutdown")
        self.notify("exit")
        try:
            return self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            self._process.kill()
            return self._process.wait()
        finally:
            self._close_pipes()

    def close(self) -> None:
        """Ends the daemon without the protocol's goodbye (closing stdin ends it too)."""
        if self._process.poll() is None:
            self._close_pipes()
            try:
                self._process.wait(5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()

    def __enter__(self) -> "BaseContextClient":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        if self._process.poll() is None and self._closed_reason is None:
            try:
                self.shutdown()
                return
            except BaseContextError:
                pass
        self.close()

    # ---- framing --------------------------------------------------------------------------------

    def _send(self, message: Dict[str, Any]) -> None:
        body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        frame = b"Content-Length: " + str(len(body)).encode("ascii") + b"\r\n\r\n" + body
        assert self._process.stdin is not None
        with self._write_lock:
            try:
                self._process.stdin.write(frame)
                self._process.stdin.flush()
            except (BrokenPipeError, ValueError) as error:
                raise BaseContextError(None, f"the daemon is gone: {error}") from error

    def _read_frame(self, stream: IO[bytes]) -> Optional[Dict[str, Any]]:
        """One message, or None at the end of the stream."""
        length: Optional[int] = None
        while True:
            line = stream.readline()
            if not line:
                return None
            line = line.rstrip(b"\r\n")
            if not line:
                break  # the blank line ends the headers
            name, _, value = line.decode("ascii").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        if length is None:
            raise ValueError("a message without Content-Length")
        body = stream.read(length)
        if len(body) < length:
            return None
        return json.loads(body.decode("utf-8"))

    def _read_loop(self) -> None:
        assert self._process.stdout is not None
        reason = "the daemon closed its output"
        try:
            while True:
                message = self._read_frame(self._process.stdout)
                if message is None:
                    break
                self._dispatch(message)
        except Exception as error:  # a broken frame: nothing more can be read reliably
            reason = f"unreadable message from the daemon: {error}"
        finally:
            self._fail_pending(reason)

    def _dispatch(self, message: Dict[str, Any]) -> None:
        if "id" in message and "method" not in message:
            with self._lock:
                pending = self._pending.pop(message["id"], None)
            if pending is None:
                return  # the reply to a request we gave up on
            error = message.get("error")
            if error is not None:
                pending.error = BaseContextError(error.get("code"), error.get("message", ""), error.get("data"))
            else:
                pending.result = message.get("result")
            pending.done.set()
        elif "id" in message:
            self._answer(message)
        elif message.get("method") == "$/cancelRequest":
            cancelled = self._incoming.get((message.get("params") or {}).get("id"))
            if cancelled is not None:
                cancelled.set()
        else:
            method, params = message.get("method", ""), message.get("params") or {}
            for handler in self._handlers.get(method, []):
                handler(params)
            with self._notified:
                self._notifications.append((method, params))
                self._notified.notify_all()

    def _answer(self, message: Dict[str, Any]) -> None:
        """A request from the daemon: answered on a thread of its own (a model call takes a while)."""
        request_id, method = message["id"], message.get("method", "")
        handler = self._request_handlers.get(method)
        if handler is None:
            self._send({"jsonrpc": "2.0", "id": request_id, "error": {"code": METHOD_NOT_FOUND, "message": f"unsupported: {method}"}})
            return
        cancelled = threading.Event()
        self._incoming[request_id] = cancelled

        def run() -> None:
            try:
                reply: Dict[str, Any] = {"result": handler(message.get("params") or {}, cancelled)}
            except BaseContextError as error:
                reply = {"error": {"code": error.code or REQUEST_FAILED, "message": error.message, **({"data": error.data} if error.data is not None else {})}}
            except Exception as error:  # the handler's own failure: the daemon falls back
                reply = {"error": {"code": INTERNAL_ERROR, "message": f"{type(error).__name__}: {error}"}}
            finally:
                self._incoming.pop(request_id, None)
            try:
                self._send({"jsonrpc": "2.0", "id": request_id, **reply})
            except BaseContextError:
                pass  # the daemon is gone; nobody waits for this answer

        threading.Thread(target=run, name=f"base-context-{method}", daemon=True).start()

    def _fail_pending(self, reason: str) -> None:
        with self._lock:
            self._closed_reason = reason
            pending, self._pending = self._pending, {}
        for waiting in pending.values():
            waiting.error = BaseContextError(None, f"the daemon is gone: {reason}")
            waiting.done.set()

    def _close_pipes(self) -> None:
        # stdin first (a daemon reading it ends), then stdout once the reader thread has seen its
        # end: closing a stream another thread is reading from can block on its lock.
        try:
            if self._process.stdin is not None:
                self._process.stdin.close()
        except OSError:
            pass
        self._reader.join(5)
        try:
            if self._process.stdout is not None and not self._reader.is_alive():
                self._process.stdout.close()
        except OSError:
            pass
