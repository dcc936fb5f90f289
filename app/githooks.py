"""The hooks `git receive-pack` runs for a push over HTTP: `python -I -S app/githooks.py pre-receive|proc-receive`.

A hook only relays: it hands the pushed ref updates to the server process that is serving the push (over the
Unix socket named in GLOSS_HOOK_SOCKET, see app.githttp.HookChannel), which checks or applies them with the
project's snapshot already in memory (storage.receive), and passes the answer back to receive-pack. So it
imports nothing but the standard library and starts in a few milliseconds; Python's `site` is not even loaded.

- pre-receive: the commands on standard input; the answer's message goes to standard error (git shows it as
  `remote: ...`) and its exit status refuses or accepts the whole push.
- proc-receive: speaks receive-pack's pkt-line protocol (githooks(5)): version, commands, one result each.
A hook that cannot reach the server refuses the push: nothing is ever accepted unchecked.
"""
from __future__ import annotations

import json
import os
import socket
import sys
from typing import Any, BinaryIO

# limits.MAX_HOOK_REQUEST_BYTES bounds the server's side; this copy because a hook imports nothing of ours
MAX_ANSWER = 16 * 1024 * 1024


def ask_server(request: dict[str, Any]) -> dict[str, Any]:
    """Send one JSON request line to the server process and read its one-line answer."""
    request["token"] = os.environ["GLOSS_HOOK_TOKEN"]
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as channel:
        channel.connect(os.environ["GLOSS_HOOK_SOCKET"])
        channel.sendall(json.dumps(request).encode("utf-8") + b"\n")
        answer = bytearray()
        while not answer.endswith(b"\n") and len(answer) < MAX_ANSWER:
            block = channel.recv(65536)
            if not block:
                break
            answer += block
    return json.loads(answer)


# ----------------------------------------------------------------------------- pkt-line
def read_pkt(stream: BinaryIO) -> bytes | None:
    """One pkt-line payload; None for a flush packet."""
    header = stream.read(4)
    if len(header) < 4:
        raise EOFError("receive-pack closed the stream")
    length = int(header, 16)
    if length == 0:
        return None
    return stream.read(length - 4)


def write_pkt(stream: BinaryIO, payload: bytes | None) -> None:
    stream.write(b"0000" if payload is None else b"%04x" % (len(payload) + 4) + payload)


# ----------------------------------------------------------------------------- the two hooks
def pre_receive() -> int:
    commands = [line for line in sys.stdin.buffer.read().decode("utf-8").splitlines() if line.strip()]
    quarantine = os.environ.get("GIT_QUARANTINE_PATH")  # may be relative to the hook's directory
    answer = ask_server({"hook": "pre-receive", "commands": commands,
                         "quarantine": os.path.abspath(quarantine) if quarantine else None})
    if answer.get("message"):
        print(answer["message"], file=sys.stderr)
    return int(answer.get("status", 1))


def proc_receive(stdin: BinaryIO, stdout: BinaryIO) -> int:
    read_pkt(stdin)  # version=1 and receive-pack's capabilities
    while read_pkt(stdin) is not None:
        pass
    write_pkt(stdout, b"version=1\0")
    write_pkt(stdout, None)
    stdout.flush()
    commands = []
    while (line := read_pkt(stdin)) is not None:
        commands.append(line.decode("utf-8").strip())  # "<old> <new> <ref>"
    answer = ask_server({"hook": "proc-receive", "commands": commands})
    if "results" not in answer:  # the server failed: every ref is refused
        print(answer.get("message", "Gloss could not apply the push"), file=sys.stderr)
        answer["results"] = [{"ref": command.split(" ", 2)[2], "error": "server error", "message": ""}
                             for command in commands]
    for result in answer["results"]:
        if result["message"]:
            print(result["message"], file=sys.stderr)
        status = f"ok {result['ref']}" if result["error"] is None else f"ng {result['ref']} {result['error']}"
        write_pkt(stdout, status.encode("utf-8"))
    write_pkt(stdout, None)
    stdout.flush()
    return 0


def main(argv: list[str]) -> int:
    try:
        if argv[1:] == ["pre-receive"]:
            return pre_receive()
        if argv[1:] == ["proc-receive"]:
            return proc_receive(sys.stdin.buffer, sys.stdout.buffer)
    except (OSError, ValueError, KeyError, EOFError) as error:
        print(f"Gloss could not handle the push ({error})", file=sys.stderr)
        return 1
    print("usage: githooks.py pre-receive|proc-receive", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
