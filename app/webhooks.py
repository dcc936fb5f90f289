"""Webhook delivery: Git history after each hook's cursor, signed per Standard Webhooks, POSTed, at least once.

One worker process of `gloss serve` delivers, elected with a `flock` as the writer is (app.relay.elect): the
next worker takes over when it dies. It looks at the branch head of every project with hooks every
POLL_SECONDS (a read of one small ref file each, and every writer, API or `git push`, moves that ref), so a
commit is on its way within about that long. For each hook whose cursor is behind the head it walks the
first-parent commits after the cursor, oldest first (storage.history.commits_since: the text-change index
names the (asset, locale) pairs each changed), and POSTs them one commit a delivery, or, with a coalescing
window, all the commits made within the window in one (at most max_commits_per_delivery). The cursor moves
only after a 2xx answer, and is saved durably at least every SAVE_EVERY_SECONDS: after a crash the
deliveries made since the last save are made again (with the same `webhook-id`s, in order), never skipped.
A failure is retried after 1 s, 2 s, 4 s ... (capped), and a hook still failing after webhook_retry_seconds
is marked failing (still tried once per cap). The writer's process stands aside for a while at the election,
so that with several workers deliveries do not wait for the writes' GIL. On a cluster, each node's deliverer
delivers only the projects that node leads, up to the head recorded in ZooKeeper (cluster.node.delivery_head).

No server-side request forgery: a hook's URL must resolve to public addresses only (not loopback, private,
link-local, the cloud metadata address, multicast or reserved), unless $GLOSS_WEBHOOK_ALLOW lists networks
(CIDR, comma-separated) the operator allows. The check is made when the hook is made and again at every
attempt, and the connection goes to the address that was checked (a name that resolves elsewhere the second
time cannot slip through: DNS rebinding). Redirects are answers like any other non-2xx: not followed.
"""
from __future__ import annotations

import http.client
import ipaddress
import json
import os
import socket
import ssl
import sys
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence
from urllib.parse import urlsplit

from standardwebhooks import Webhook

from limits import (MAX_CHANGES_PER_DELIVERY, MAX_COMMITS_PER_DELIVERY, MAX_WEBHOOK_URL_CHARS,
                    WEBHOOK_BACKOFF_CAP_SECONDS, WEBHOOK_FIRST_RETRY_SECONDS, WEBHOOK_RETRY_SECONDS,
                    WEBHOOK_TIMEOUT_SECONDS, describe)
from storage import history
from storage.errors import NotFound, StorageError
from storage.project import Project
from storage.store import Store, iso_from_timestamp
from storage.trailers import Trailer
from storage.webhooks import EVENTS, EVENTS_OF_ACTION, TEXTS_CHANGED, Hook, HookStore, events_of

from .relay import elect

ALLOW_VARIABLE = "GLOSS_WEBHOOK_ALLOW"
POLL_SECONDS = 0.05  # how often the deliverer looks at the heads: the lag a delivery starts with, at most
# While a run of deliveries goes on, the cursor is saved (fsync) at least this often, and when the run ends: a
# save per delivery cost 10-20 ms on the shared machine, more than a delivery. A crash re-delivers what was
# delivered since the last save, in order (at least once), never skips it.
SAVE_EVERY_SECONDS = 0.2
DELIVERY_THREADS = 4  # hooks delivered to at once (one slow receiver holds one thread, not the others)
STAND_ASIDE_SECONDS = 2.0  # how long the writer leaves the other workers to be elected deliverer first
MAX_ANSWER_BYTES = 64 * 1024  # read of a receiver's answer, and the part of it an attempt records
USER_AGENT = "Gloss-Webhooks/1"
# Addresses no hook may reach whatever is_global says: cloud metadata services, and local-use NAT64 (RFC 8215,
# where the IPv4 address sits depends on the operator's prefix length).
ALWAYS_REFUSED = (ipaddress.ip_network("169.254.169.254/32"), ipaddress.ip_network("fd00:ec2::254/128"),
                  ipaddress.ip_network("64:ff9b:1::/48"))
# NAT64's well-known prefix (RFC 6052): the last 32 bits are the IPv4 address a translator forwards to.
NAT64 = ipaddress.ip_network("64:ff9b::/96")


class UnsafeUrl(ValueError):
    """A hook URL Gloss will not call: not http(s), not resolving, or resolving to an address it refuses."""


# ----------------------------------------------------------------------------- SSRF
def allowed_networks() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """The networks $GLOSS_WEBHOOK_ALLOW opens (e.g. `127.0.0.1/8` for tests); entries that are not CIDR
    notation are ignored."""
    networks = []
    for entry in os.environ.get(ALLOW_VARIABLE, "").replace(" ", ",").split(","):
        try:
            networks.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:
            continue
    return networks


def refused(address: str) -> bool:
    """Whether Gloss refuses to send to this IP address: the one SSRF rule (hook creation and every attempt).

    Every address the packets reach is judged: an IPv6 address that embeds an IPv4 one (IPv4-mapped, NAT64,
    6to4, Teredo) reaches that IPv4 address too, so `64:ff9b::7f00:1` is 127.0.0.1. Each is allowed when
    $GLOSS_WEBHOOK_ALLOW lists it, else refused unless global (not loopback, private, link-local, shared,
    documentation...), not multicast, not reserved and not in ALWAYS_REFUSED."""
    allowed = allowed_networks()

    def refused_one(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
        if any(ip in network for network in allowed if network.version == ip.version):
            return False
        return (not ip.is_global or ip.is_multicast or ip.is_reserved
                or any(ip in network for network in ALWAYS_REFUSED if network.version == ip.version))

    ip = ipaddress.ip_address(address.split("%", 1)[0])  # (an IPv6 zone index is no part of the address)
    return any(refused_one(reached) for reached in _reached(ip))


def _reached(ip: ipaddress.IPv4Address | ipaddress.IPv6Address
             ) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """The addresses a connection to `ip` reaches: the IPv4 address alone for an IPv4-mapped or NAT64 one (the
    IPv6 form is only its translation; a public IPv4 address through NAT64 is public), else `ip` and any IPv4
    address it embeds (6to4's relay, Teredo's server and client)."""
    if isinstance(ip, ipaddress.IPv4Address):
        return [ip]
    if ip.ipv4_mapped is not None:
        return [ip.ipv4_mapped]
    if ip in NAT64:
        return [ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)]
    reached: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = [ip]
    if ip.sixtofour is not None:
        reached.append(ip.sixtofour)
    if ip.teredo is not None:
        reached.extend(ip.teredo)
    return reached


def resolve(url: str) -> tuple[str, str, int, str, str]:
    """(scheme, host, port, path with query, the address to connect to) of a URL Gloss may call; UnsafeUrl
    otherwise. Every address the name resolves to must be allowed, not only the first."""
    if len(url) > MAX_WEBHOOK_URL_CHARS:
        raise UnsafeUrl(f"The URL is too long {describe('max_webhook_url_chars')}")
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as error:
        raise UnsafeUrl(f"Not a URL: {error}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() for c in url):
        raise UnsafeUrl("A webhook URL must be an http:// or https:// URL with a host name")
    if parts.port == 0:
        raise UnsafeUrl("A webhook URL's port must be 1 to 65535")
    if parts.username is not None or parts.password is not None:
        raise UnsafeUrl("A webhook URL may not carry credentials (use the signature to authenticate Gloss)")
    try:
        found = socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise UnsafeUrl(f"The host {parts.hostname!r} does not resolve: {error}") from None
    addresses = [str(info[4][0]) for info in found]
    bad = [address for address in addresses if refused(address)]
    if bad or not addresses:
        raise UnsafeUrl(f"The host {parts.hostname!r} resolves to {bad[0] if bad else 'nothing'}, a loopback, "
                        f"private, link-local or metadata address Gloss does not call (${ALLOW_VARIABLE} lists "
                        "networks an operator allows)")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return parts.scheme, parts.hostname, port, path, addresses[0]


# ----------------------------------------------------------------------------- one attempt
class _PinnedHTTP(http.client.HTTPConnection):
    """An HTTP connection to the address that was checked, whatever the host name resolves to now."""

    def __init__(self, host: str, port: int, address: str, timeout: float):
        super().__init__(host, port, timeout=timeout)
        self.address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self.address, self.port), self.timeout)


class _PinnedHTTPS(http.client.HTTPSConnection):
    """The same over TLS: the certificate is checked against the host name (SNI too)."""

    def __init__(self, host: str, port: int, address: str, timeout: float):
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self.address = address

    def connect(self) -> None:
        raw = socket.create_connection((self.address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(raw, server_hostname=self.host)  # type: ignore[attr-defined]


def post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int | None, str]:
    """POST `body` once: (the answer's status, "") or (None or the status, what went wrong)."""
    try:
        scheme, host, port, path, address = resolve(url)
    except UnsafeUrl as error:
        return None, str(error)
    kind = _PinnedHTTPS if scheme == "https" else _PinnedHTTP
    connection = kind(host, port, address, WEBHOOK_TIMEOUT_SECONDS)
    try:
        connection.request("POST", path, body, {**headers, "Content-Length": str(len(body))})
        response = connection.getresponse()
        response.read(MAX_ANSWER_BYTES)
        if 200 <= response.status < 300:
            return response.status, ""
        if 300 <= response.status < 400:
            return response.status, "a redirect: not followed (give the final URL)"
        return response.status, f"answered {response.status} {response.reason}"
    except (OSError, http.client.HTTPException) as error:
        return None, f"{type(error).__name__}: {error}"[:500]
    finally:
        connection.close()


def signed_headers(secret: str, message_id: str, body: bytes, when: float) -> dict[str, str]:
    """Standard Webhooks' headers for `body`."""
    signature = Webhook(secret).sign(message_id, datetime.fromtimestamp(when, timezone.utc), body.decode("utf-8"))
    return {"webhook-id": message_id, "webhook-timestamp": str(int(when)), "webhook-signature": signature,
            "Content-Type": "application/json", "User-Agent": USER_AGENT}


def delivery_type(events: list[str]) -> str:
    """A delivery's `type`: what its commits did (an asset created, a branch merged, a push applied), before
    `translation.changed`, which most of those commits raise too; `data.events` lists them all."""
    return next((event for event in events if event != TEXTS_CHANGED), events[0])


def payload(project_id: str, commits: Sequence[tuple[history.CommitDigest, list[str]]], when: float
            ) -> dict[str, Any]:
    """The body of one delivery: `commits` are (commit, the events of it the hook wants), oldest first."""
    events = [event for event in EVENTS if any(event in wanted for _, wanted in commits)]
    pairs: dict[tuple[str, str], None] = {}
    authors: dict[tuple[str, str], None] = {}
    assets: dict[str, None] = {}
    for digest, _ in commits:
        authors[(digest.info.author_name, digest.info.author_email)] = None
        pairs.update(dict.fromkeys(digest.pairs))
        if digest.info.trailers.get(Trailer.ASSET) and digest.info.trailers.get(Trailer.ACTION) in ASSET_ACTIONS:
            assets[digest.info.trailers[Trailer.ASSET]] = None
    listed = list(pairs)[:MAX_CHANGES_PER_DELIVERY]
    first, last = commits[0][0].info, commits[-1][0].info
    return {"type": delivery_type(events), "timestamp": iso_from_timestamp(when), "data": {
        "project": project_id, "events": events,
        "commits": {"from": first.parent, "to": last.id, "count": len(commits)},
        "commit_list": [{"id": digest.info.id, "parent": digest.info.parent, "time": digest.info.time,
                         "author": {"name": digest.info.author_name, "email": digest.info.author_email},
                         "summary": digest.info.summary, "action": digest.info.trailers.get(Trailer.ACTION, ""),
                         "events": wanted} for digest, wanted in commits],
        "authors": [{"name": name, "email": email} for name, email in authors],
        "changes": [{"asset": asset, "locale": locale} for asset, locale in listed],
        "changes_truncated": len(listed) < len(pairs),
        "assets": list(assets)}}


# The actions whose Asset trailer names an asset the commit created, changed or deleted.
ASSET_ACTIONS = frozenset(action for action, raised in EVENTS_OF_ACTION.items()
                          if any(event.startswith("asset.") for event in raised))


# ----------------------------------------------------------------------------- the hook's state
def delivered(hook: Hook, cursor: str, attempts: list[dict[str, Any]]) -> None:
    """The receiver took the deliveries up to `cursor` (`attempts`, oldest first; none when every commit
    since the last save raised no event of the hook's)."""
    hook.cursor = cursor
    if attempts:
        hook.failures, hook.failing_since, hook.next_attempt, hook.failing = 0, None, 0.0, False
    for attempt in attempts:
        hook.record(attempt)


def failed(hook: Hook, attempt: dict[str, Any], now: float) -> None:
    """One more failed attempt: back off exponentially; failing after webhook_retry_seconds of failures."""
    hook.failures += 1
    hook.failing_since = hook.failing_since or now
    wait = min(WEBHOOK_FIRST_RETRY_SECONDS * 2 ** min(hook.failures - 1, 32), WEBHOOK_BACKOFF_CAP_SECONDS)
    hook.next_attempt = now + wait
    hook.failing = hook.failing or now - hook.failing_since >= WEBHOOK_RETRY_SECONDS
    hook.record(attempt)


def batches(commits: list[history.CommitDigest], size: int) -> Iterator[list[history.CommitDigest]]:
    for start in range(0, len(commits), size):
        yield commits[start:start + size]


# ----------------------------------------------------------------------------- the deliverer
class Deliverer:
    """Delivers every project's hooks from one process (see the module's docstring)."""

    def __init__(self, store: Store, hooks: HookStore, clock: Callable[[], float] = time.time,
                 send: Callable[[str, bytes, dict[str, str]], tuple[int | None, str]] = post,
                 head_of: Callable[[Project], bytes | None] | None = None):
        self.store, self.hooks, self.clock, self.send = store, hooks, clock, send
        # the head to deliver up to; a cluster node (cluster.node) gives the recorded head of the projects it
        # leads and None for the others, so that one node of the cluster delivers each commit
        self.head_of: Callable[[Project], bytes | None] = head_of or (lambda project: project.repo.head())
        self._busy: set[str] = set()
        self._lock = threading.Lock()
        self._pending_since: dict[str, float] = {}  # hook id -> when the deliverer saw it behind (coalescing)
        self._pool: ThreadPoolExecutor | None = None

    def start_election(self, lock_path: Path, is_writer: Callable[[], bool] = lambda: False) -> None:
        """Stand for deliverer in the background; once elected, deliver for the life of the process. The
        writer (app.relay) stands aside for a while, so that with several workers another one delivers: the
        writer's process is the busiest at 50 writes/s, and deliveries there waited for its GIL."""
        def stand() -> None:
            time.sleep(STAND_ASIDE_SECONDS / 4)  # (the writer's election is under way meanwhile)
            if is_writer():
                time.sleep(STAND_ASIDE_SECONDS)
            try:
                elect(lock_path)
            except FileNotFoundError:  # the data directory went away meanwhile (a test's, torn down): no one to serve
                print(f"gloss: webhooks: {lock_path.parent} is gone; this process delivers nothing", file=sys.stderr)
                return
            self.run()

        threading.Thread(target=stand, name="gloss-webhooks", daemon=True).start()

    def run(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=DELIVERY_THREADS, thread_name_prefix="gloss-webhook")
        while True:
            try:
                self.tick()
            except Exception:  # a bug must not end delivery for good: the log says so, the next turn retries
                traceback.print_exc(file=sys.stderr)
            time.sleep(POLL_SECONDS)

    def tick(self) -> None:
        """Start a delivery for every hook that is behind its project's head and due."""
        for project_id in self.hooks.projects():
            try:
                head = self.head_of(self.store.project(project_id))
            except (StorageError, OSError):  # a project deleted from under its hooks, a disk gone: next turn
                continue
            if head is None:
                continue
            for hook in self.hooks.hooks(project_id, cached=True):
                if self._due(hook, head.decode(), self.clock()) and self._claim(hook.id):
                    if self._pool is None:  # called directly (tests): deliver in this thread
                        self._deliver_claimed(project_id, hook.id)
                    else:
                        self._pool.submit(self._deliver_claimed, project_id, hook.id)

    def _due(self, hook: Hook, head: str, now: float) -> bool:
        if hook.cursor == head:
            self._pending_since.pop(hook.id, None)
            return False
        if now < hook.next_attempt:
            return False
        since = self._pending_since.setdefault(hook.id, now)
        return now - since >= hook.coalesce

    def _claim(self, hook_id: str) -> bool:
        with self._lock:
            if hook_id in self._busy:
                return False
            self._busy.add(hook_id)
            return True

    def _deliver_claimed(self, project_id: str, hook_id: str) -> None:
        try:
            self.deliver(project_id, hook_id)
        except NotFound:  # the hook (or its project) was deleted meanwhile
            pass
        except Exception:
            traceback.print_exc(file=sys.stderr)
        finally:
            self._pending_since.pop(hook_id, None)
            with self._lock:
                self._busy.discard(hook_id)

    def deliver(self, project_id: str, hook_id: str) -> None:
        """Deliver the hook's commits after its cursor up to the head, oldest first, until one fails."""
        project = self.store.project(project_id)
        hook = self.hooks.hook(project_id, hook_id)  # read afresh: the look that found it due may be outdated
        head = self.head_of(project)
        if head is None or hook.cursor == head.decode() or self.clock() < hook.next_attempt:
            return
        commits = history.commits_since(project, hook.cursor.encode(), head)
        if commits is None:  # the cursor is not on the branch's history (restored from a backup?): start anew
            self.hooks.update(project_id, hook_id, lambda stored: delivered(stored, head.decode(), [{
                "id": "", "time": iso_from_timestamp(self.clock()), "status": "skipped", "code": None,
                "error": f"the last commit delivered, {hook.cursor}, is not on the branch: delivery goes on "
                         "from the head", "commits": None, "events": []}]))
            return
        size = MAX_COMMITS_PER_DELIVERY if hook.coalesce else 1
        progress = Progress()
        try:
            for batch in batches(commits, size):
                if progress.cursor is not None and self.head_of(project) is None:
                    return  # this node no longer leads the project (a cluster's): its new leader goes on
                wanted = [(digest, hook.wants(events_of(digest.info.trailers.get(Trailer.ACTION, ""),
                                                        bool(digest.pairs)))) for digest in batch]
                wanted = [(digest, events) for digest, events in wanted if events]
                if wanted:
                    attempt = self._post(project_id, hook, wanted)
                    if attempt["error"]:
                        progress.failure = attempt
                        return
                    progress.attempts.append(attempt)
                progress.cursor = batch[-1].info.id
                if time.monotonic() - progress.saved >= SAVE_EVERY_SECONDS:
                    self._save(project_id, hook_id, progress)
        finally:
            self._save(project_id, hook_id, progress)

    def _save(self, project_id: str, hook_id: str, progress: "Progress") -> None:
        """Store what the deliveries since the last save did (nothing to store: nothing written)."""
        if progress.cursor is None and progress.failure is None:
            return
        cursor, attempts, failure = progress.cursor, progress.attempts, progress.failure

        def apply(stored: Hook) -> None:
            if cursor is not None:
                delivered(stored, cursor, attempts)
            if failure is not None:
                failed(stored, failure, self.clock())

        self.hooks.update(project_id, hook_id, apply)
        progress.cursor, progress.attempts, progress.failure = None, [], None
        progress.saved = time.monotonic()

    def _post(self, project_id: str, hook: Hook, commits: list[tuple[history.CommitDigest, list[str]]]
              ) -> dict[str, Any]:
        """One delivery: the attempt as the hook records it (its `error` empty when the receiver took it)."""
        now = time.time()  # the signature's time is the wall clock's (receivers check it); `clock` schedules
        body = json.dumps(payload(project_id, commits, now), ensure_ascii=False, separators=(",", ":")).encode()
        # the same commits are the same message: a receiver drops a delivery made again after a crash by its id
        message_id = f"msg_{hook.id}_{commits[0][0].info.id[:12]}_{commits[-1][0].info.id[:12]}"
        started = time.monotonic()
        status, error = self.send(hook.url, body, signed_headers(hook.secret, message_id, body, now))
        return {"id": message_id, "time": iso_from_timestamp(now), "status": "failed" if error else "delivered",
                "code": status, "error": error, "duration_ms": round((time.monotonic() - started) * 1000, 1),
                "commits": {"from": commits[0][0].info.parent, "to": commits[-1][0].info.id, "count": len(commits)},
                "events": sorted({event for _, events in commits for event in events})}


@dataclass
class Progress:
    """What one run of deliveries did since its last save."""

    cursor: str | None = None  # the last commit delivered (or passed: no event of the hook's)
    attempts: list[dict[str, Any]] = field(default_factory=list)  # the successful ones, oldest first
    failure: dict[str, Any] | None = None  # the attempt that ended the run
    saved: float = field(default_factory=time.monotonic)


def start_delivery(app: Any) -> None:
    """Stand for deliverer in this worker process of the Flask app (`gloss serve`, or `wsgi.py` under another
    server): one worker of the data directory delivers."""
    store, writer = app.extensions["gloss.store"], app.extensions["gloss.writer"]
    node = app.extensions.get("gloss.cluster")
    Deliverer(store, app.extensions["gloss.webhooks"],
              head_of=node.delivery_head if node is not None else None).start_election(store.locks_dir / ".webhooks.lock",
                                                                       writer.is_writer.is_set)
