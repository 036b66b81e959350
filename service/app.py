"""`kgqa serve`: the question-answering layer over HTTP, with a web page that draws the evidence as a graph.

One process keeps one driver (a connection pool) and one warm ``QuestionAnswerer`` per (method, KG, llm, k),
so a request pays for its question, not for loading models. Every failure is one line in ``{"error": …}``:
bad input is a 4xx, a database that is down or goes away is a 503 (the driver's own timeouts bound the wait),
and nothing else leaks a traceback.

Bound to loopback, anyone on the machine may ask. Bound elsewhere, every /api call needs
``Authorization: Bearer <token>``, the token kept like the Neo4j password: ``$KGQA_HOME/serve-token``, 0600;
without it /api/health says only up or down, /openapi.json is refused, /docs is not served, and no error
names a server path.

Bounded against hostile callers: the request body (``MAX_BODY_BYTES``), every string field, the warm
answerers (an LRU of ``MAX_ANSWERERS``), and the Host header (the bound address plus ``allowed_hosts``: a web
page cannot reach a loopback server by DNS rebinding). Every response carries a CSP and
``X-Frame-Options: DENY``.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import re
import secrets
import socket
import threading
import urllib.request
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from kgqa.core import config
from kgqa.core.errors import KgqaError
from kgqa.core.secret_files import read_or_make_secret
from kgqa.graph.connection import connection_settings, failure_kind, failure_line, open_driver
from kgqa.graph.kg import list_kgs
from kgqa.qa.answering import MAX_K, QuestionAnswerer
from kgqa.qa.methods import METHODS
from kgqa.qa.verification import verify_claim
from neo4j import Driver
from neo4j.exceptions import DriverError, Neo4jError
from pydantic import AfterValidator, BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

STATIC = Path(__file__).resolve().parent / "static"
MAX_QUESTION_CHARS = 2000
MAX_NAME_CHARS = 200  # a KG or LLM name: longer is no name of ours, and each one is a key of the cache below
# A question of MAX_QUESTION_CHARS, every character JSON-escaped (\\uXXXX, 6 bytes), fits with room to spare.
MAX_BODY_BYTES = 64 * 1024
MAX_ANSWERERS = 4  # warm answerers kept (each holds a retriever and its models); the least recently used goes
RETRY_S = float(os.environ.get("KGQA_SERVE_RETRY_S", "10"))
MethodName = Literal[tuple(["auto", *METHODS])]  # type: ignore[valid-type]


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


# A question or claim: some words, at most MAX_QUESTION_CHARS characters.
Text = Annotated[str, Field(max_length=MAX_QUESTION_CHARS), AfterValidator(_not_blank)]


# A KG or LLM name.
Name = Annotated[str, Field(max_length=MAX_NAME_CHARS)]


class AskRequest(BaseModel):
    question: Text
    kg: Name | None = None
    method: MethodName = "auto"  # type: ignore[valid-type]
    llm: Name = "none"
    k: Annotated[int, Field(ge=1, le=MAX_K)] = 100


class VerifyRequest(BaseModel):
    claim: Text
    kg: Name | None = None


@dataclass
class ServiceSettings:
    host: str = "127.0.0.1"
    port: int = 8000
    token: str | None = None  # required of every /api call when set
    allowed_hosts: tuple[str, ...] = ()  # Host header names accepted beside the bound address ("*": any)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def accepted_hosts(bound: str, allowed: tuple[str, ...] = ()) -> frozenset[str] | None:
    """The Host header names a request may carry (lower case, no port); None accepts any.

    Bound to loopback: its loopback names only, so that a web page whose DNS name is rebound to 127.0.0.1
    cannot read the API. Bound to a wildcard (0.0.0.0, ::): the machine's own names and addresses. Either way
    plus ``allowed`` (e.g. the DNS name a proxy forwards), where ``*`` turns the check off."""
    if "*" in allowed:
        return None
    names = {bound.lower(), *(name.lower().strip("[]") for name in allowed)}
    if is_loopback(bound) or bound in ("0.0.0.0", "::"):
        names.update(LOOPBACK_NAMES)
    if bound in ("0.0.0.0", "::"):
        names.update(_own_names())
    return frozenset(names)


def _own_names() -> set[str]:
    host = socket.gethostname()
    names = {host.lower(), socket.getfqdn().lower()}
    with contextlib.suppress(OSError):
        names.update(str(info[4][0]).lower() for info in socket.getaddrinfo(host, None))
    return names


def host_name(header: str) -> str:
    """The name in a Host header, without its port ("[::1]:8000" -> "::1")."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


PAGE_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


class Guard:
    """ASGI middleware in front of everything: the Host check, the body limit and the security headers.

    The body is counted as it arrives, not only by Content-Length, so a chunked upload is cut off too."""

    def __init__(self, app: ASGIApp, hosts: frozenset[str] | None, max_body: int = MAX_BODY_BYTES) -> None:
        self.app, self.hosts, self.max_body = app, hosts, max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if self.hosts is not None and host_name(headers.get("host", "")) not in self.hosts:
            await _send_error(send, 421, "this server does not answer for that Host (see --allow-host)")
            return
        too_large = f"the request body is larger than {self.max_body} bytes"
        declared = headers.get("content-length", "0").strip() or "0"
        if not declared.isdigit() or int(declared) > self.max_body:
            await _send_error(send, 413, too_large)
            return
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body:
                    # Raised inside the route's body read: FastAPI passes an HTTPException through as it is.
                    raise StarletteHTTPException(413, too_large)
            return message

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *_SECURITY_HEADERS]
            await send(message)

        await self.app(scope, counted, with_headers)


_SECURITY_HEADERS = [
    (b"content-security-policy", PAGE_CSP.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
]


async def _send_error(send: Send, status: int, message: str) -> None:
    response = JSONResponse({"error": message}, status)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*response.raw_headers, *_SECURITY_HEADERS],
        }
    )
    await send({"type": "http.response.body", "body": response.body})


def service_token(home: Path | None = None) -> str:
    """The bearer token, made once (0600) beside the Neo4j password."""
    return read_or_make_secret((home or config.kgqa_home()) / "serve-token")


class Backend:
    """The driver and the warm answerers, shared by the request threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._driver: Driver | None = None
        # LRU: the key holds caller-chosen strings, so an unbounded dict grows with every new llm or kg name.
        self._answerers: OrderedDict[tuple[str, str | None, str, int], QuestionAnswerer] = OrderedDict()

    def driver(self) -> Driver:
        with self._lock:
            if self._driver is None:
                # DatabaseUnavailable (503) when the database cannot be reached; a query whose server goes
                # away is retried for RETRY_S, then answered with a 503, not held for the driver's 30 s.
                self._driver = open_driver(retry_s=RETRY_S)
            return self._driver

    def answerer(self, method: str, kg: str | None, llm: str, k: int) -> QuestionAnswerer:
        key = (method, kg, llm, k)
        with self._lock:
            found = self._answerers.get(key)
            if found is not None:
                self._answerers.move_to_end(key)
                return found
        made = QuestionAnswerer(self.driver(), method, kg, llm, k)
        with self._lock:
            found = self._answerers.setdefault(key, made)
            self._answerers.move_to_end(key)
            while len(self._answerers) > MAX_ANSWERERS:
                self._answerers.popitem(last=False)
        return found

    def cached(self) -> int:
        with self._lock:
            return len(self._answerers)

    def close(self) -> None:
        with self._lock:
            if self._driver is not None:
                self._driver.close()
                self._driver = None


def _error(status: int, message: str, remote: bool = False) -> JSONResponse:
    line = message.strip().splitlines()[0] if message.strip() else "error"
    return JSONResponse({"error": without_paths(line) if remote else line}, status)


# An absolute path of two parts or more (/root/.kgqa/models/...), not the //host/path of a URL.
SERVER_PATH = re.compile(r"(?<![\w:/.~])(?:~/|/)[\w.@+-]+(?:/[\w.@+-]+)+/?")


def without_paths(message: str) -> str:
    """A message for a caller beyond loopback: the server's file paths (models, KGQA_HOME) left out."""
    return SERVER_PATH.sub("<server path>", message)


def create_app(settings: ServiceSettings | None = None) -> FastAPI:
    settings = settings or ServiceSettings()
    backend = Backend()
    remote = settings.token is not None  # bound beyond loopback: callers may be anyone on the network

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        backend.close()

    app = FastAPI(
        lifespan=lifespan,
        # /docs is our own page over vendored Swagger UI (no CDN), /openapi.json needs the token beyond
        # loopback, and ReDoc (a CDN script) is not served.
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        title="kgqa",
        version=config.PLUGIN_VERSION,
        description="Question answering over knowledge graphs, native to Neo4j. The same answers as "
        "`kgqa ask --json`.",
    )
    app.state.backend = backend
    app.add_middleware(Guard, hosts=accepted_hosts(settings.host, settings.allowed_hosts))

    def token_given(request: Request) -> bool:
        if settings.token is None:
            return True
        # Headers arrive as latin-1 text; compare bytes, since compare_digest refuses non-ASCII str.
        given = request.headers.get("authorization", "").encode("latin-1", "replace")
        return secrets.compare_digest(given, f"Bearer {settings.token}".encode())

    def authorised(request: Request) -> None:
        if not token_given(request):
            raise HTTPException(401, "a bearer token is required (Authorization: Bearer <token>)")

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
        if first.get("type") == "json_invalid":
            return _error(422, "body: the request is not valid JSON")
        where = ".".join(str(part) for part in first.get("loc", ()) if part != "body") or "body"
        message = str(first.get("msg", "invalid")).removeprefix("Value error, ")
        return _error(422, f"{where}: {message}"[:300])

    @app.exception_handler(StarletteHTTPException)  # FastAPI's own and the router's 404 and 405
    async def _http(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return _error(exc.status_code, str(exc.detail), remote)

    @app.exception_handler(KgqaError)
    @app.exception_handler(DriverError)
    @app.exception_handler(Neo4jError)
    async def _failure(_request: Request, exc: Exception) -> JSONResponse:
        return _error(failure_kind(exc).http_status, failure_line(exc) or str(exc), remote)

    @app.exception_handler(Exception)
    async def _bug(_request: Request, exc: Exception) -> JSONResponse:
        # A bug of ours: one line naming the exception's type, never its message (it may hold paths) nor a
        # traceback; the server's log keeps the rest.
        return _error(500, f"internal error ({type(exc).__name__}); the server's log has the details")

    @app.get("/api/health", summary="The database and the LLM endpoint, each with its own state")
    def health(request: Request) -> JSONResponse:
        database: dict[str, Any]
        try:
            uri = connection_settings()[0]
            backend.driver().verify_connectivity()
            database = {"ok": True, "uri": uri}
        except (KgqaError, DriverError, Neo4jError, OSError) as exc:
            database = {"ok": False, "error": failure_line(exc) or str(exc)}
        status = "up" if database["ok"] else "down"
        if not token_given(request):
            # Beyond loopback without the token: whether it answers, not where its database and LLM are.
            return JSONResponse({"status": status}, 200 if database["ok"] else 503)
        body = {"status": status, "database": database, "llm": _llm_health()}
        return JSONResponse(body, 200 if database["ok"] else 503)

    @app.get("/api/kgs", summary="The loaded knowledge graphs", dependencies=[Depends(authorised)])
    def kgs() -> list[dict[str, Any]]:
        return [{k: _plain(v) for k, v in row.items()} for row in list_kgs(backend.driver())]

    @app.post(
        "/api/ask",
        summary="Answer a question (the JSON of `kgqa ask --json`)",
        dependencies=[Depends(authorised)],
    )
    def ask(body: AskRequest) -> dict[str, Any]:
        answerer = backend.answerer(body.method, body.kg, body.llm, body.k)
        result = answerer.ask(body.question).to_json()
        if remote:  # the route's and the explanation's reasons may name model files on this machine
            for key in ("route", "explanation"):
                result[key] = _scrubbed(result[key])
        return result

    @app.post(
        "/api/verify", summary="Check a claim (SimGRAG fact verification)", dependencies=[Depends(authorised)]
    )
    def verify(body: VerifyRequest) -> dict[str, Any]:
        return verify_claim(backend.driver(), body.claim, body.kg).to_json()

    @app.get("/api/methods", summary="The retrieval methods", dependencies=[Depends(authorised)])
    def methods() -> list[str]:
        return ["auto", *METHODS]

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    @app.get("/openapi.json", include_in_schema=False, dependencies=[Depends(authorised)])
    def openapi() -> JSONResponse:
        return JSONResponse(app.openapi())

    @app.get("/docs", include_in_schema=False)
    def docs() -> Response:
        if remote:
            # The page cannot send the bearer token that /openapi.json needs here.
            raise HTTPException(404, "API docs are served on loopback only (/openapi.json takes the token)")
        return FileResponse(STATIC / "docs.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app


def app_from_env() -> FastAPI:
    """The app as each of several worker processes builds it (``kgqa serve --workers N``): uvicorn imports it
    by name, so the settings come through the environment that `kgqa serve` set."""
    host = os.environ.get("KGQA_SERVE_HOST", "127.0.0.1")
    port = int(os.environ.get("KGQA_SERVE_PORT", "8000"))
    allowed = tuple(h for h in os.environ.get("KGQA_SERVE_ALLOWED_HOSTS", "").split(",") if h)
    return create_app(ServiceSettings(host, port, None if is_loopback(host) else service_token(), allowed))


def _scrubbed(value: Any) -> Any:
    """``value`` (JSON) with :func:`without_paths` applied to every string in it."""
    if isinstance(value, str):
        return without_paths(value)
    if isinstance(value, dict):
        return {k: _scrubbed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrubbed(v) for v in value]
    return value


def _plain(value: Any) -> Any:
    """Neo4j temporal values (a KG's load time) as ISO strings; everything else as it is."""
    return value.iso_format() if hasattr(value, "iso_format") else value


def _llm_health() -> dict[str, Any]:
    """Whether the OpenAI-compatible endpoint answers ``GET /models`` within 2 s (no tokens are spent)."""
    from kgqa.answer.llm import default_base_url

    base = default_base_url().rstrip("/")
    try:
        with urllib.request.urlopen(f"{base}/models", timeout=2) as response:  # noqa: S310 - a configured URL
            return {"ok": 200 <= response.status < 300, "endpoint": base}
    except Exception as exc:  # noqa: BLE001 - any failure is the endpoint's state, reported in one line
        reason = str(getattr(exc, "reason", exc)).splitlines()[0] if str(exc) else type(exc).__name__
        return {"ok": False, "endpoint": base, "error": reason}
