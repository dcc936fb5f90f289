"""A node's cluster configuration: a small JSON file given to `gloss serve --cluster FILE`.

    {"node": "n1", "url": "http://10.0.0.1:8000", "zookeeper": "10.0.0.9:2181",
     "secret_file": "/etc/gloss/cluster-secret", "replication": 2, "session_timeout": 3.0}

`url` is where the other nodes reach this one (forwarded requests, replication); the secret authenticates
those node-to-node calls and must be the same file content on every node.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

NODE_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,31}$")
DEFAULT_REPLICATION = 2  # copies of each project: the leader's and one follower's
DEFAULT_SESSION_TIMEOUT = 3.0  # seconds without a heartbeat after which ZooKeeper takes a node for dead
MIN_SECRET_CHARS = 32


class ConfigError(ValueError):
    """The cluster configuration cannot be used (the message says which field)."""


@dataclass(frozen=True)
class ClusterConfig:
    node: str
    url: str
    zookeeper: str
    secret: str
    replication: int = DEFAULT_REPLICATION
    session_timeout: float = DEFAULT_SESSION_TIMEOUT
    # tests only: seconds the leader waits between the replicated commit and its compare-and-set, so that a
    # test can freeze it there (fencing)
    pause_before_record: float = 0.0

    @classmethod
    def load(cls, path: Path) -> "ClusterConfig":
        try:
            raw = json.loads(Path(path).read_text("utf-8"))
            secret = Path(raw["secret_file"]).read_text("utf-8").strip()
            config = cls(node=str(raw["node"]), url=str(raw["url"]).rstrip("/"), zookeeper=str(raw["zookeeper"]),
                         secret=secret, replication=int(raw.get("replication", DEFAULT_REPLICATION)),
                         session_timeout=float(raw.get("session_timeout", DEFAULT_SESSION_TIMEOUT)),
                         pause_before_record=float(raw.get("pause_before_record", 0.0)))
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise ConfigError(f"cluster configuration {path}: {error!r}") from None
        if not NODE_ID.match(config.node):
            raise ConfigError(f"cluster configuration {path}: node id {config.node!r} must match {NODE_ID.pattern}")
        if len(config.secret) < MIN_SECRET_CHARS:
            raise ConfigError(f"cluster configuration {path}: the secret needs {MIN_SECRET_CHARS} characters at least")
        if config.replication < 2:
            raise ConfigError(f"cluster configuration {path}: replication must be 2 or more (a write is on two disks)")
        return config


def write_config(path: Path, node: str, url: str, zookeeper: str, secret_file: Path, **extra: object) -> Path:
    """Write a node's configuration file (the demo and the tests make theirs with it)."""
    raw = {"node": node, "url": url, "zookeeper": zookeeper, "secret_file": str(secret_file), **extra}
    path.write_text(json.dumps(raw, indent=2) + "\n", "utf-8")
    return path
