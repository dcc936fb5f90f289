"""A whole cluster on one machine, on loopback: ZooKeeper, N nodes (`gloss serve --cluster`) and HAProxy.

`gloss cluster demo` and the cluster tests run it. Every node gets its own data directory, copied from one
seeded directory (the same repositories, byte for byte, so every copy starts at the recorded head), its own
configuration file and the shared secret; DIR/cluster.json tells `gloss cluster status` where everything is.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Callable

from .config import write_config
from .coordination import Coordination
from .processes import HAProxy, ZooKeeper, free_port, signal_group, stop

READY_SECONDS = 60.0
STATE_FILE = "cluster.json"
REPO_ROOT = Path(__file__).resolve().parent.parent


class LocalCluster:
    def __init__(self, directory: Path, nodes: int, zookeeper: ZooKeeper | None = None, chroot: str = "",
                 **node_config: object):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.ids = [f"n{index + 1}" for index in range(nodes)]
        self.ports = {node: free_port() for node in self.ids}
        self.urls = {node: f"http://127.0.0.1:{port}" for node, port in self.ports.items()}
        self.own_zookeeper = zookeeper is None
        self.zookeeper = zookeeper or ZooKeeper(self.directory / "zookeeper")
        self.node_config = node_config
        self.chroot = chroot  # a path of its own in a shared ZooKeeper ("/fencing"), or "" for the root
        self.processes: dict[str, subprocess.Popen] = {}
        self.balancer: HAProxy | None = None
        self.secret_file = self.directory / "cluster-secret"
        if not self.secret_file.exists():
            self.secret_file.write_text(secrets.token_urlsafe(32) + "\n", "utf-8")
            self.secret_file.chmod(0o600)
        self.secret = self.secret_file.read_text("utf-8").strip()

    @property
    def zookeeper_hosts(self) -> str:
        return self.zookeeper.address + self.chroot

    def data_dir(self, node: str) -> Path:
        return self.directory / node

    def seed_from(self, seeded: Path) -> None:
        """Every node's data directory a copy of `seeded` (repositories and keys)."""
        for node in self.ids:
            if not self.data_dir(node).exists():
                shutil.copytree(seeded, self.data_dir(node), symlinks=True)

    def start(self, balancer: bool = True) -> "LocalCluster":
        if self.own_zookeeper:
            self.zookeeper.start()
        for node in self.ids:
            self.start_node(node)
        for node in self.ids:
            self.wait_ready(node)
        if balancer:
            self.balancer = HAProxy(self.directory / "haproxy", self.urls).start()
        self.write_state()
        return self

    def start_node(self, node: str) -> None:
        config = write_config(self.directory / f"{node}.json", node, self.urls[node], self.zookeeper_hosts,
                              self.secret_file, **self.node_config)
        log = open(self.directory / f"{node}.log", "ab")
        env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
        self.processes[node] = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "--data", str(self.data_dir(node)), "serve", "--host", "127.0.0.1",
             "--port", str(self.ports[node]), "--cluster", str(config)],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, start_new_session=True,
            cwd=REPO_ROOT)
        log.close()

    def wait_ready(self, node: str, timeout: float = READY_SECONDS) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.processes[node].poll() is not None:
                raise RuntimeError(f"node {node} exited (see {self.directory / (node + '.log')})")
            try:
                with urllib.request.urlopen(self.urls[node] + "/cluster/v1/ready", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"node {node} not ready after {timeout:.0f} s")

    def signal(self, node: str, sig: int) -> None:
        signal_group(self.processes[node], sig)

    def kill(self, node: str) -> None:
        self.signal(node, signal.SIGKILL)
        self.processes[node].wait()

    def write_state(self) -> None:
        state = {"zookeeper": self.zookeeper_hosts, "balancer": self.balancer.url if self.balancer else None,
                 "nodes": [{"id": node, "url": self.urls[node], "pid": self.processes[node].pid}
                           for node in self.ids]}
        (self.directory / STATE_FILE).write_text(json.dumps(state, indent=2) + "\n", "utf-8")

    def stop(self) -> None:
        if self.balancer is not None:
            self.balancer.stop()
        running = [process for process in self.processes.values() if process.poll() is None]
        for process in running:  # all at once: each takes a few seconds to finish its requests
            signal_group(process, signal.SIGCONT)  # (a node a test froze)
            process.send_signal(signal.SIGTERM)
        for process in running:
            stop(process, grace=10.0)
        if self.own_zookeeper:
            self.zookeeper.stop()


def status(directory: Path) -> dict:
    """`gloss cluster status`: the nodes the demo started and every project's placement and recorded head."""
    state = json.loads((Path(directory) / STATE_FILE).read_text("utf-8"))
    coordination = Coordination(state["zookeeper"], 5.0)
    coordination.start()
    try:
        alive = coordination.alive_nodes()
        nodes = [{"id": node["id"], "url": node["url"], "pid": alive[node["id"]].pid if node["id"] in alive
                  else node["pid"], "alive": node["id"] in alive} for node in state["nodes"]]
        projects = []
        for project in coordination.projects():
            placement = coordination.placement(project)
            projects.append({"id": project, "leader": placement.leader, "followers": list(placement.followers),
                             "head": coordination.recorded(project).head})
        return {"nodes": nodes, "projects": projects}
    finally:
        coordination.stop()


def run_demo(directory: Path, nodes: int, seed: Callable[[Path], str]) -> int:
    """Start everything, print the balancer's URL and a key, and stop everything on SIGINT/SIGTERM."""
    directory = Path(directory)
    seeded = directory / "seed"
    key_file = directory / "demo-key"
    if not seeded.exists():
        key_file.write_text(seed(seeded) + "\n", "utf-8")
    cluster = LocalCluster(directory, nodes)
    cluster.seed_from(seeded)
    stopping = {"asked": False}

    def ask_to_stop(signum: int, frame: object) -> None:
        stopping["asked"] = True

    signal.signal(signal.SIGTERM, ask_to_stop)
    signal.signal(signal.SIGINT, ask_to_stop)
    try:
        cluster.start()
        assert cluster.balancer is not None
        print(f"zookeeper: {cluster.zookeeper.address}")
        for node in cluster.ids:
            print(f"node {node}: {cluster.urls[node]} (data {cluster.data_dir(node)})")
        print(f"Full-access API key: {key_file.read_text('utf-8').strip()}")
        print(f"balancer: {cluster.balancer.url}", flush=True)
        while not stopping["asked"]:
            time.sleep(0.2)
    finally:
        cluster.stop()
    print("stopped", flush=True)
    return 0
