"""The programs a cluster runs beside the nodes, started for the demo and the tests: a ZooKeeper server (the
Debian `zookeeperd` package's jars, never its system service) and HAProxy, each with a configuration generated
in a directory of its own, on free loopback ports. Production deployments run their own (README, "Running a
cluster")."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

ZOOKEEPER_JAR = Path("/usr/share/java/zookeeper.jar")  # its manifest names the jars it needs
ZOOKEEPER_MAIN = "org.apache.zookeeper.server.ZooKeeperServerMain"
HAPROXY_TEMPLATE = Path(__file__).resolve().parent.parent / "deploy" / "haproxy.cfg.template"
START_SECONDS = 30.0  # the JVM starts in 2-5 s on a quiet machine


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def missing_programs() -> list[str]:
    """What `make test` installs and a cluster here needs: java with ZooKeeper's jars, haproxy."""
    missing = [] if ZOOKEEPER_JAR.exists() and shutil.which("java") else ["zookeeperd"]
    return missing + ([] if shutil.which("haproxy") else ["haproxy"])


def _answers_ruok(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0) as connection:
            connection.sendall(b"ruok")
            return connection.recv(4) == b"imok"
    except OSError:
        return False


def stop(process: subprocess.Popen, grace: float = 5.0) -> None:
    """SIGTERM, then SIGKILL after `grace` seconds."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class ZooKeeper:
    """A standalone ZooKeeper server in `directory`, on a free loopback port; `address` is `127.0.0.1:PORT`."""

    def __init__(self, directory: Path, port: int | None = None):
        self.directory = Path(directory)
        self.port = port or free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None

    def start(self) -> "ZooKeeper":
        (self.directory / "data").mkdir(parents=True, exist_ok=True)
        config = self.directory / "zoo.cfg"
        # a short tick so that sessions may be short (ZooKeeper allows 2 to 20 ticks): failover within seconds
        config.write_text(f"tickTime=500\ndataDir={self.directory / 'data'}\nclientPort={self.port}\n"
                          "clientPortAddress=127.0.0.1\nadmin.enableServer=false\nminSessionTimeout=1000\n"
                          "maxSessionTimeout=30000\n4lw.commands.whitelist=ruok,srvr\n", "utf-8")
        log = open(self.directory / "zookeeper.log", "ab")
        self.process = subprocess.Popen(
            ["java", "-Xmx256m", "-XX:+UseSerialGC", "-Dzookeeper.admin.enableServer=false",
             "-cp", str(ZOOKEEPER_JAR), ZOOKEEPER_MAIN, str(config)],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        deadline = time.monotonic() + START_SECONDS
        while not _answers_ruok(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"ZooKeeper did not start (see {self.directory / 'zookeeper.log'})")
            time.sleep(0.1)
        return self

    def stop(self) -> None:
        if self.process is not None:
            stop(self.process)


class HAProxy:
    """HAProxy on a free loopback port in front of `backends` ({node id: base URL}), from deploy/'s template."""

    def __init__(self, directory: Path, backends: dict[str, str], port: int | None = None):
        self.directory = Path(directory)
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.backends = backends
        self.process: subprocess.Popen | None = None

    def config_text(self) -> str:
        servers = "\n".join(f"    server {node} {url.split('://', 1)[1]} check cookie {node}"
                            for node, url in self.backends.items())
        return HAPROXY_TEMPLATE.read_text("utf-8").replace("{bind}", f"127.0.0.1:{self.port}") \
            .replace("{servers}", servers).replace("{errors}", str(HAPROXY_TEMPLATE.parent / "errors"))

    def start(self) -> "HAProxy":
        self.directory.mkdir(parents=True, exist_ok=True)
        config = self.directory / "haproxy.cfg"
        config.write_text(self.config_text(), "utf-8")
        log = open(self.directory / "haproxy.log", "ab")
        # -db: stay in the foreground (no daemon, no master), so that this process is the one to stop
        self.process = subprocess.Popen(["haproxy", "-db", "-f", str(config)], stdout=log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1.0).close()
                return self
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"HAProxy did not start (see {self.directory / 'haproxy.log'})") from None
                time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None:
            stop(self.process)


def signal_group(process: subprocess.Popen, sig: int) -> None:
    """Send a signal to a process started in a session of its own and to its children (a node's workers)."""
    try:
        os.killpg(process.pid, sig)
    except ProcessLookupError:
        pass
