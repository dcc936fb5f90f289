"""A real `gloss serve --workers 2` on a free port, plain HTTP to it, and the hostile-file corpus.

Shared by the reliability suite (tests/reliability/) and bench/bench_hostile.py, which prints the figures.
"""
from __future__ import annotations

import http.client
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from tests.gitserver import children
from tests.support import poll_until

ROOT = Path(__file__).resolve().parents[2]
GLOSS = [sys.executable, "-c", "from app.cli import main; import sys; sys.exit(main())"]


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes
    seconds: float

    def json(self):
        return json.loads(self.body)

    @property
    def is_json_error(self) -> bool:
        """The service's error shape: JSON {"status": <code>, "error": "<text>"} with the HTTP code."""
        try:
            payload = self.json()
        except ValueError:
            return False
        return (isinstance(payload, dict) and payload.get("status") == self.status
                and isinstance(payload.get("error"), str) and bool(payload["error"])
                and self.headers.get("content-type", "").startswith("application/json"))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# A request whose connection broke before its answer was whole (a worker killed under it): the outcome is unknown.
# http.client raises OSError subclasses for most of these, but IncompleteRead (an answer cut short) is an
# HTTPException.
CONNECTION_BROKEN = (OSError, http.client.HTTPException)


class Server:
    """`gloss serve` in a subprocess; `key` is the demo project's full-access key printed on first start."""

    def __init__(self, data_dir: Path, workers: int = 2, env: dict[str, str] | None = None,
                 max_open_files: int | None = None):
        self.data_dir = Path(data_dir)
        self.workers = workers
        self.env = env or {}  # added to the server's environment (e.g. GLOSS_CONVERT_SECONDS)
        self.max_open_files = max_open_files  # the server's RLIMIT_NOFILE (`ulimit -n`), when given
        self.log_path = self.data_dir.parent / f"{self.data_dir.name}-server.log"
        self.port = 0
        self.process: subprocess.Popen | None = None
        self.key = ""

    # ----------------------------------------------------------------- life cycle
    def start(self, timeout: float = 60.0) -> "Server":
        self.port = free_port()
        log = open(self.log_path, "ab")
        env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1", **self.env)
        self.process = subprocess.Popen(
            GLOSS + ["--data", str(self.data_dir), "serve", "--port", str(self.port), "--workers", str(self.workers)],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
            preexec_fn=self._limit_open_files if self.max_open_files else None)
        log.close()
        if not poll_until(self._ready, timeout, interval=0.2):
            raise RuntimeError(f"gloss serve did not answer: {self.log()[-2000:]}")
        if not self.key:
            for line in self.log().splitlines():
                if line.startswith("Full-access API key: "):
                    self.key = line.split(": ", 1)[1].strip()
        return self

    def _ready(self) -> bool:
        """Does the server answer, with all its workers started? (An exited server fails at once.)"""
        if self.process.poll() is not None:
            raise RuntimeError(f"gloss serve exited: {self.log()[-2000:]}")
        try:
            return self.request("GET", "/api/ping", key=False, timeout=2).status == 200 \
                and len(self.worker_pids()) == self.workers
        except CONNECTION_BROKEN:
            return False

    def _limit_open_files(self) -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (self.max_open_files, self.max_open_files))

    def stop(self) -> None:
        """Graceful stop (SIGTERM to the master), then make sure nothing we started is left running."""
        if self.process is None:
            return
        workers = self.worker_pids()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.reap(workers)
        self.process = None

    def kill_master(self) -> list[int]:
        """SIGKILL the master and its workers at once (orphans would linger otherwise); returns the pids killed.
        One signal to the server's process group (it leads a session of its own), not one per pid read from
        /proc: a worker the master was forking as the list was read (a replacement for a killed one) lived on
        as an orphan, took requests on the old port and ran an import past the restart (seen once in CI)."""
        workers = self.worker_pids()
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait()
        for pid in workers:
            kill_quietly(pid)
        self.reap(workers)
        self.process = None
        return workers

    @staticmethod
    def reap(pids: Iterable[int]) -> None:
        for pid in pids:
            poll_until(lambda pid=pid: not Path(f"/proc/{pid}").exists() or _is_zombie(pid), timeout=5)

    def worker_pids(self) -> list[int]:
        return children(self.process.pid) if self.process is not None else []

    def descendants(self, pid: int) -> list[int]:
        return descendants(pid)

    def log(self) -> str:
        try:
            return self.log_path.read_text("utf-8", "replace")
        except FileNotFoundError:
            return ""

    def tracebacks(self) -> list[str]:
        """Lines of the server log that start a traceback (there must be none)."""
        lines = self.log().splitlines()
        return [lines[i + 1] if i + 1 < len(lines) else line for i, line in enumerate(lines)
                if line.startswith("Traceback") or "Exception ignored" in line]

    # ----------------------------------------------------------------- requests
    def request(self, method: str, path: str, body: bytes | Iterable[bytes] | None = None,
                headers: dict[str, str] | None = None, key: bool | str = True, timeout: float = 60.0) -> Reply:
        headers = dict(headers or {})
        if key:
            headers["Authorization"] = f"Loco {self.key if key is True else key}"
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        started = time.monotonic()
        try:
            chunked = body is not None and not isinstance(body, (bytes, bytearray))
            connection.request(method, path, body=body, headers=headers, encode_chunked=chunked)
            response = connection.getresponse()
            data = response.read()
            return Reply(response.status, {name.lower(): value for name, value in response.getheaders()}, data,
                         time.monotonic() - started)
        finally:
            connection.close()

    def raw(self, data: bytes, timeout: float = 10.0) -> bytes:
        """Send raw bytes as a request and return the raw answer (for what http.client refuses to send)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as sock:
            sock.sendall(data)
            chunks = []
            while True:
                try:
                    chunk = sock.recv(65536)
                except (ConnectionResetError, socket.timeout):
                    break
                if not chunk:
                    break
                chunks.append(chunk)
        return b"".join(chunks)

    def head(self, project: str = "acme-notes") -> str:
        return git(self.data_dir / "projects" / project, "rev-parse", "HEAD")


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (its children, theirs, and so on)."""
    return [found for child in children(pid) for found in (child, *descendants(child))]


def kill_quietly(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


# ----------------------------------------------------------------------------- the hostile corpus
def _readable() -> list[tuple[str, str]]:
    """Every readable (ext, variant) of the registry: a new reader joins the hostile corpus by registering."""
    from formats.registry import FORMATS

    return [(spec.ext, spec.variant) for spec in FORMATS if spec.readable]


READABLE = _readable()


def _json_shapes(n: int) -> Iterator[tuple[str, bytes]]:
    yield "comment-openers", b"/*a" * (n // 3)
    yield "backslash-quotes", b'"\\' * (n // 2)
    yield "deep-arrays", b"[" * n
    yield "deep-objects", b'{"a":' * (n // 5)
    yield "huge-line", b'{"k": "' + b"x" * n
    yield "bad-utf8", b'{"k": "' + b"\xff\xfe" * (n // 2) + b'"}'
    body = b"{" + b",".join(b'"k%d": "value %d"' % (i, i) for i in range(n // 24)) + b"}"
    yield "truncated", body[: len(body) // 2]
    yield "line-comments", b"//" * (n // 2)
    yield "unclosed-pairs", b'{"a":"b",' * (n // 9)


def _po_shapes(n: int) -> Iterator[tuple[str, bytes]]:
    header = b'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n"Language: fr\\n"\n\n'
    yield "comment-block", header + b"#a\n" * (n // 3) + b'msgid "x'
    yield "escaped-quotes", header + b'msgid "' + b'\\"' * (n // 2)
    yield "huge-line", header + b'msgid "' + b"x" * n
    yield "bad-utf8", header + b'msgid "a"\nmsgstr "' + b"\xff" * n + b'"\n'
    entries = b"".join(b'msgid "k%d"\nmsgstr "v%d"\n\n' % (i, i) for i in range(n // 24))
    yield "truncated", (header + entries)[: (len(header) + len(entries)) // 2] + b'\nmsgstr "'
    yield "rot13-charset", header.replace(b"UTF-8", b"rot13") + b'msgid "a"\nmsgstr "b"\n'
    yield "ten-plural-forms", (header.replace(b'"Language: fr\\n"', b'"Language: fr\\n"\n"Plural-Forms: nplurals=10; '
                                              b'plural=n%10;\\n"')
                               + b'msgid "a"\nmsgid_plural "b"\nmsgstr[0] "c"\nmsgstr[1] "d"\n')
    formula = b"+".join([b"n"] * (n // 2))
    yield "huge-formula", (header.replace(b'"Language: fr\\n"', b'"Language: fr\\n"\n"Plural-Forms: nplurals=2; '
                                          b'plural=' + formula + b';\\n"')
                           + b'msgid "a"\nmsgid_plural "b"\nmsgstr[0] "c"\nmsgstr[1] "d"\n')
    yield "keyword-soup", b"msgid msgid msgid " * (n // 18)


def _mo_shapes(n: int) -> Iterator[tuple[str, bytes]]:
    import struct

    magic = struct.pack("<I", 0x950412DE)
    yield "truncated-header", magic + b"\x00" * 6
    yield "huge-count", magic + struct.pack("<6I", 0, 0x7FFFFFFF, 28, 28 + 8, 0, 0) + b"\x00" * n
    yield "offsets-beyond", magic + struct.pack("<6I", 0, 1, 28, 36, 0, 0) + struct.pack("<4I", 10 ** 9, 10 ** 9,
                                                                                      5, 10 ** 9)
    yield "bad-magic", b"\x12\x34\x56\x78" + b"\x00" * n
    yield "bad-utf8", magic + struct.pack("<6I", 0, 1, 28, 36, 0, 0) + struct.pack("<4I", n, 44, n, 44) + \
        b"\xff" * n


def _csv_shapes(n: int) -> Iterator[tuple[str, bytes]]:
    yield "unterminated-quote", b'id,fr\n"' + b"x" * n
    yield "doubled-quotes", b'id,fr\n"' + b'""' * (n // 2)
    yield "bad-utf8", b"id,fr\nk," + b"\xff" * n + b"\n"
    yield "nul-unterminated", b'id,fr\nk,"\x00' + b"a\x00" * (n // 2)
    yield "unknown-columns", b"id," + b"notalocale," * (n // 11) + b"\n"
    rows = b"id,fr\n" + b"".join(b'k%d,"v%d"\n' % (i, i) for i in range(n // 12))
    yield "truncated", rows[: n // 2] + b'\nk,"cut short'  # an unterminated quoted cell at the end


SHAPES = {"po": _po_shapes, "pot": _po_shapes, "mo": _mo_shapes, "json": _json_shapes, "arb": _json_shapes,
          "csv": _csv_shapes}


def _garbage_shapes(n: int) -> Iterator[tuple[str, bytes]]:
    """Bytes of no format that stress every scanner: long lines, runs of quotes, escapes, comment openers and
    nesting, in each format's syntax family."""
    yield "long-line", b"x" * n
    yield "quote-heavy", b'"' * n
    yield "single-quote-heavy", b"'" * n
    yield "escape-heavy", b'\\"' * (n // 2)
    yield "unicode-escapes", b"\\u00e9" * (n // 6)
    yield "c-comments", b"/*" * (n // 2)
    yield "xml-comments", b"<!--" * (n // 4)
    yield "hash-comments", b"#\n" * (n // 2)
    yield "braces", b"{" * n
    yield "brackets", b"[" * n
    yield "elements", b"<a>" * (n // 3)
    yield "indents", b"".join(b" " * (i % 64) + b"k:\n" for i in range(n // 40))
    yield "bad-utf8", b"\xff\xfe" * (n // 2)


def _hostile_catalogues(n: int) -> dict[str, tuple[str, int, int]]:
    """label -> (text, units, key depth): catalogues a writer turns into escape-, quote- and entry-heavy files
    of its own syntax, of about `n` bytes."""
    return {
        "escaped-units": ('"\\\n\t\'<&>{}%s' * 8, n // 150, 1),  # many entries full of escapes
        "many-short-units": ('v"', max(1, n // 16), 1),  # as many entries as the size allows
        "one-escaped-text": ('\\"\n' * (n // 4), 1, 1),  # one huge text of nothing but escapes
        "long-text": ("é" * (n // 2), 1, 1),
        "deep-keys": ("x", max(1, n // 400), 40),
    }


def _written_shapes(ext: str, variant: str, n: int) -> Iterator[tuple[str, bytes]]:
    """Valid files of the format itself, made by its writer from hostile catalogues (a readable format without
    a writer gets none): the shapes a real file can take."""
    from formats import Catalogue, ExportOptions, Translation, Unit, export_file
    from formats.registry import lookup

    spec = lookup(ext, variant)
    if not spec.writable:
        return
    for label, (text, count, depth) in _hostile_catalogues(n).items():
        prefix = ".".join(f"k{level}" for level in range(depth - 1))
        units = [Unit(id=f"{prefix}.u{number}" if prefix else f"u{number}",
                      translations={"en": Translation(text), "fr": Translation(text)}) for number in range(count)]
        catalogue = Catalogue(source_locale="en", locales=["en", "fr"], units=units)
        try:
            data = export_file(catalogue, ext, variant, ExportOptions(locale="fr", all_locales=spec.multi_locale)).data
        except Exception:  # noqa: BLE001 - a text the format cannot carry (XML and U+0000...): no such file
            continue
        yield f"written-{label}", data


def malformed_corpus(size: int) -> Iterator[tuple[str, str, str, bytes]]:
    """(label, ext, variant, data): broken files of the formats with shapes of their own (`SHAPES`), each of
    which a server must refuse with a JSON 4xx; about `size` bytes each."""
    for ext, variant in READABLE:
        for label, data in (SHAPES[ext](size) if ext in SHAPES else ()):
            yield f"{ext}{'/' + variant if variant else ''}:{label}", ext, variant, data


def hostile_corpus(size: int) -> Iterator[tuple[str, str, str, bytes]]:
    """(label, ext, variant, data) for every readable format of the registry: its malformed shapes, valid files
    its writer makes from hostile texts, and garbage in every syntax family; about `size` bytes each."""
    yield from malformed_corpus(size)
    for ext, variant in READABLE:
        for label, data in [*_written_shapes(ext, variant, size), *_garbage_shapes(size)]:
            yield f"{ext}{'/' + variant if variant else ''}:{label}", ext, variant, data


def import_path(ext: str, variant: str) -> str:
    query = "locale=fr" + (f"&format={variant}" if variant else "")
    return f"/api/import/{ext}?{query}"


def convert_path(ext: str) -> str:
    """The keyless convert of a file of `ext` (read in its default variant) to JSON."""
    return f"/api/convert/{ext}/hostile-fr.json"


class SlowClients:
    """`count` keyless connections that trickle their request forever: half send one header line at a time,
    half send complete headers and then one body byte at a time (every `every` seconds, until closed)."""

    def __init__(self, server: Server, count: int, every: float = 2.0):
        self.server = server
        self.count = count
        self.every = every
        self.sockets: list[socket.socket] = []
        self.stopped = threading.Event()
        self.trickled = threading.Event()  # set once every client has sent a second piece
        self.trickler = threading.Thread(target=self._trickle, name="slow-clients", daemon=True)

    def __enter__(self) -> "SlowClients":
        for number in range(self.count):
            sock = socket.create_connection(("127.0.0.1", self.server.port), timeout=10)
            self.sockets.append(sock)
            if number % 2:  # complete headers, then a body that never ends
                sock.sendall(b"POST /api/import/json?locale=en HTTP/1.1\r\nHost: x\r\n"
                             b"Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n")
            else:  # headers that never end
                sock.sendall(b"GET /api/locales HTTP/1.1\r\nHost: x\r\n")
        self.trickler.start()
        return self

    def _trickle(self) -> None:
        rounds = 0
        while not self.stopped.wait(self.every) and rounds < 10_000:
            rounds += 1
            for number, sock in enumerate(self.sockets):
                try:
                    sock.send(b"[" if number % 2 else f"X-Slow-{rounds}: {rounds}\r\n".encode())
                except OSError:
                    pass  # the server closed it: that is allowed
            self.trickled.set()

    def still_open(self) -> int:
        """How many slow connections the server has not closed (a closed one reads EOF or fails)."""
        open_ones = 0
        for sock in self.sockets:
            sock.setblocking(False)
            try:
                open_ones += sock.recv(1, socket.MSG_PEEK) != b""
            except BlockingIOError:
                open_ones += 1
            except OSError:
                pass
            finally:
                sock.setblocking(True)
        return open_ones

    def __exit__(self, *exc) -> None:
        self.stopped.set()
        self.trickler.join(timeout=10)
        for sock in self.sockets:
            sock.close()
