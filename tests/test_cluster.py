"""A cluster on loopback (issue 22): a real ZooKeeper (one for the module), `gloss serve --cluster` nodes and
HAProxy, through their public surface: HTTP, `gloss cluster status`, the nodes' Git repositories."""
from __future__ import annotations

import http.cookiejar
import json
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

import pytest

from app.cli import seed_node_data
from cluster.coordination import Coordination
from cluster.demo import LocalCluster, status
from cluster.processes import ZooKeeper, missing_programs
from storage.keys import KeyStore
from storage.store import Store
from tests.support import IN_CI, REPO_ROOT, assert_fsck_clean, git, wait_until
from tests.webhook_receiver import Receiver

# one worker runs the whole module (make test: --dist loadgroup), so that its ZooKeeper and clusters start once
pytestmark = [pytest.mark.cluster, pytest.mark.xdist_group("cluster")]
PROJECT = "acme-notes"
HOOK_SECRET = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
SESSION = 2.0  # seconds: ZooKeeper takes a silent node for dead after this (the failover tests wait for it)


def request(url: str, method: str = "GET", data: dict | None = None, key: str | None = None,
            headers: dict | None = None) -> tuple[int, dict, bytes]:
    body = urllib.parse.urlencode(data).encode() if data is not None else None
    sent = dict(headers or {})
    if key:
        sent["Authorization"] = f"Loco {key}"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=body, method=method, headers=sent),
                                    timeout=60) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def head_of(cluster: LocalCluster, node: str) -> str:
    return git(cluster.data_dir(node) / "projects" / PROJECT, "rev-parse", "main").strip()


def settled(cluster: LocalCluster) -> bool:
    """Whether the controller has nothing left to move (Controller.reconcile's quiet round): every project led
    by a live node and followed by one, and no node leading two projects more than another (_rebalance)."""
    state = status(cluster.directory)
    alive = {node["id"] for node in state["nodes"] if node["alive"]}
    leading = Counter(project["leader"] for project in state["projects"])
    counts = [leading[node] for node in alive]
    return bool(counts) and max(counts) - min(counts) <= 1 and all(
        project["leader"] in alive and alive & set(project["followers"]) for project in state["projects"])


def rejoin(cluster: LocalCluster, node: str) -> None:
    """Start a killed node again and wait until the controller is done placing it: a test that follows must not
    meet a leadership moving under its writes (answered 503, the failover window)."""
    cluster.start_node(node)
    cluster.wait_ready(node)
    wait_until(lambda: settled(cluster), timeout=60, interval=0.5)  # (each look opens a ZooKeeper session)


def placement(cluster: LocalCluster) -> dict:
    return next(p for p in status(cluster.directory)["projects"] if p["id"] == PROJECT)


@pytest.fixture(scope="module")
def zookeeper(tmp_path_factory):
    missing = missing_programs()
    if missing:
        if IN_CI:
            pytest.fail(f"{', '.join(missing)} not installed (make test installs them)")
        pytest.skip(f"{', '.join(missing)} not installed")
    server = ZooKeeper(tmp_path_factory.mktemp("zookeeper")).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def hooks_to_loopback():
    """The nodes (started with this environment) may deliver webhooks to the test's receiver on loopback."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GLOSS_WEBHOOK_ALLOW", "127.0.0.1/32")
        yield


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> tuple[Path, str]:
    directory = tmp_path_factory.mktemp("seed") / "data"
    return directory, seed_node_data(directory)


def start_cluster(directory: Path, seeded: tuple[Path, str], zookeeper: ZooKeeper, chroot: str,
                  **config: object) -> LocalCluster:
    cluster = LocalCluster(directory, 3, zookeeper, chroot=chroot, session_timeout=SESSION, **config)
    cluster.seed_from(seeded[0])
    try:
        cluster.start()
        # (the first node up may place the project before the others registered: followers come next round)
        wait_until(lambda: placement(cluster)["leader"] is not None and placement(cluster)["followers"],
                   timeout=20)
    except BaseException:
        cluster.stop()
        raise
    return cluster


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, seeded, zookeeper, hooks_to_loopback):
    started = start_cluster(tmp_path_factory.mktemp("cluster"), seeded, zookeeper, "/main")
    yield started
    started.stop()


def test_a_write_through_the_balancer_is_on_two_disks_and_recorded_before_it_is_answered(cluster, seeded):
    key = seeded[1]
    status_code, _, _ = request(cluster.balancer.url + "/api/assets", "POST", {"id": "c.one", "text": "One"}, key)
    assert status_code == 201
    now = placement(cluster)  # read right after the answer: nothing had time to catch up afterwards
    assert head_of(cluster, now["leader"]) == now["head"]
    assert any(head_of(cluster, follower) == now["head"] for follower in now["followers"])
    for _ in range(6):  # round robin over the three nodes: every one answers with the write
        assert request(cluster.balancer.url + "/api/assets/c.one", key=key)[0] == 200


def test_a_write_sent_to_a_node_that_does_not_lead_is_made_by_the_leader(cluster, seeded):
    key = seeded[1]
    before = placement(cluster)
    other = next(node for node in cluster.ids if node != before["leader"])
    # a client cannot pass for a node: without the secret the header is ignored and the write forwarded
    status_code, _, _ = request(cluster.urls[other] + "/api/assets", "POST", {"id": "c.two", "text": "Two"}, key,
                                headers={"X-Gloss-Forwarded-By": "n9"})
    assert status_code == 201
    after = placement(cluster)
    assert after["head"] != before["head"] and head_of(cluster, after["leader"]) == after["head"]
    assert git(cluster.data_dir(after["leader"]) / "projects" / PROJECT, "log", "-1", "--format=%s").strip()


def test_node_to_node_calls_need_the_cluster_secret(cluster):
    for path in ("/cluster/v1/has?project=acme-notes&commit=", "/cluster/v1/git/acme-notes/info/refs"):
        assert request(cluster.urls["n1"] + path)[0] == 403
        assert request(cluster.urls["n1"] + path, headers={"X-Gloss-Cluster-Secret": "x" * 43})[0] == 403
    assert request(cluster.urls["n1"] + "/cluster/v1/ready")[0] == 200


def test_cluster_status_prints_the_nodes_and_every_projects_leader_followers_and_head(cluster):
    printed = subprocess.run([sys.executable, "-m", "app.cli", "--data", str(cluster.directory), "cluster",
                              "status", "--json"], capture_output=True, check=True, cwd=REPO_ROOT).stdout
    report = json.loads(printed)
    assert [(node["id"], node["alive"]) for node in report["nodes"]] == [("n1", True), ("n2", True), ("n3", True)]
    assert {"id", "url", "pid", "alive"} <= set(report["nodes"][0])
    project = next(p for p in report["projects"] if p["id"] == PROJECT)
    assert project["leader"] in cluster.ids and len(project["followers"]) >= 1
    assert len(project["head"]) == 40


def write_until(url: str, key: str, prefix: str, stop: threading.Event, acknowledged: list[str],
                refused: list[int]) -> None:
    """One client writing new assets until told to stop: what was acknowledged, and every other status."""
    count = 0
    while not stop.is_set():
        asset = f"{prefix}.{count}"
        count += 1
        try:
            code, headers, _ = request(url + "/api/assets", "POST", {"id": asset, "text": asset}, key)
        except OSError:  # the connection broke: an unknown outcome, like a 503
            code, headers = 0, {}
        if code == 201:
            acknowledged.append(asset)
        else:
            refused.append(code)
            time.sleep(0.2)


def test_a_killed_leader_is_replaced_by_a_current_follower_and_no_acknowledged_write_is_lost(cluster, seeded):
    key = seeded[1]
    old = placement(cluster)
    stop = threading.Event()
    acknowledged: list[str] = []
    refused: list[int] = []
    writers = [threading.Thread(target=write_until, args=(cluster.balancer.url, key, f"w{n}", stop, acknowledged,
                                                          refused)) for n in range(4)]
    for writer in writers:
        writer.start()
    try:
        wait_until(lambda: len(acknowledged) >= 8, timeout=60)
        cluster.kill(old["leader"])
        killed_at = time.monotonic()
        new = wait_until(lambda: (p := placement(cluster))["leader"] != old["leader"] and p, timeout=30)
        took = time.monotonic() - killed_at
        before = len(acknowledged)
        wait_until(lambda: len(acknowledged) >= before + 8, timeout=60)  # writes go on with the new leader
    finally:
        stop.set()
        for writer in writers:
            writer.join()
    print(f"failover: {took:.1f} s; {len(acknowledged)} writes acknowledged, refused: {refused}")
    assert new["leader"] in old["followers"]
    # errors only while the leader was gone, and only 503 (HAProxy answers a request cut short by the kill as
    # Gloss answers an unknown outcome: deploy/errors/503.http), or a broken connection; never a 4xx or a 500
    assert set(refused) <= {0, 503}
    for asset in acknowledged:
        assert request(cluster.balancer.url + f"/api/assets/{asset}", key=key)[0] == 200, asset
    # the killed node, restarted, follows and catches up by fetch
    rejoin(cluster, old["leader"])
    wait_until(lambda: old["leader"] in placement(cluster)["followers"], timeout=30)
    recorded = placement(cluster)["head"]
    wait_until(lambda: head_of(cluster, old["leader"]) == recorded, timeout=30)
    exports = set()
    for node in cluster.ids:
        assert_fsck_clean(cluster.data_dir(node) / "projects" / PROJECT)
        exports.add(request(cluster.urls[node] + "/api/export/all.json", key=key)[2])
    assert len(exports) == 1


def test_a_node_that_joins_fetches_copies_and_takes_leaderships_while_writes_go_on(zookeeper, seeded, tmp_path):
    data = tmp_path / "seed"
    shutil.copytree(seeded[0], data, symlinks=True)
    keys = {PROJECT: seeded[1]}
    for number in range(3):  # four projects, so that two nodes lead two each and a third leads none
        project = Store(data).create_project(f"Joined {number}", "en", "English")
        keys[project.id] = KeyStore(data / "keys.json").create(project.id, "full", "Join")[0]
    cluster = LocalCluster(tmp_path / "join", 3, zookeeper, chroot="/join", session_timeout=SESSION)
    cluster.seed_from(data)
    shutil.rmtree(cluster.data_dir("n3") / "projects")  # the newcomer holds no project: it must fetch them
    coordination = Coordination(cluster.zookeeper_hosts, 5.0)
    stop = threading.Event()
    acknowledged: dict[str, list[str]] = {project: [] for project in keys}
    refused: list[int] = []
    writers = [threading.Thread(target=write_until, args=(cluster.urls["n1"], key, "j", stop, acknowledged[project],
                                                          refused)) for project, key in keys.items()]

    def written() -> int:
        return sum(len(assets) for assets in acknowledged.values())

    def placements() -> dict:
        return {project: coordination.placement(project) for project in coordination.projects()}

    try:
        for node in ("n1", "n2"):
            cluster.start_node(node)
        for node in ("n1", "n2"):
            cluster.wait_ready(node)
        coordination.start()
        wait_until(lambda: len(placements()) == 4 and all(p.leader and p.followers for p in placements().values()),
                   timeout=30)
        for writer in writers:
            writer.start()
        wait_until(lambda: written() >= 10, timeout=60)
        cluster.start_node("n3")
        cluster.wait_ready("n3")
        wait_until(lambda: any(p.leader == "n3" for p in placements().values()), timeout=60)
        held = sorted(project for project, p in placements().items() if "n3" in p.nodes())

        def current_on_newcomer() -> bool:
            return all(git(cluster.data_dir("n3") / "projects" / project, "rev-parse", "main").strip()
                       == coordination.recorded(project).head for project in held)

        wait_until(current_on_newcomer, timeout=60)
        before = written()
        wait_until(lambda: written() >= before + 10, timeout=60)  # and writes go on
        stop.set()
        for writer in writers:
            writer.join()
        for project, assets in acknowledged.items():  # read through the newcomer: current, or forwarded
            for asset in assets:
                assert request(cluster.urls["n3"] + f"/api/assets/{asset}", key=keys[project])[0] == 200, asset
    finally:
        stop.set()
        for writer in writers:
            if writer.is_alive():
                writer.join()
        coordination.stop()
        cluster.stop()
    print(f"join: n3 holds {held}; {written()} writes acknowledged, refused: {refused}")
    # a leadership moves as in a failover: a write in flight may be answered 503 (retry), nothing else, and for
    # no longer than a failover lasts (write_until waits 0.2 s after each refusal)
    assert set(refused) <= {0, 503} and len(refused) * 0.2 <= 10
    for project in held:
        assert_fsck_clean(cluster.data_dir("n3") / "projects" / project)


def branch_head_of(cluster: LocalCluster, node: str, branch: str) -> str:
    found = subprocess.run(["git", "rev-parse", "--verify", "-q", f"refs/heads/{branch}"], capture_output=True,
                           text=True, cwd=cluster.data_dir(node) / "projects" / PROJECT)
    return found.stdout.strip()


def test_branch_writes_and_pushes_are_recorded_like_main_and_survive_the_leaders_death(cluster, seeded, tmp_path):
    key, url = seeded[1], cluster.balancer.url
    assert request(url + "/api/branches", "POST", {"name": "feature"}, key)[0] == 201
    assert request(url + "/api/assets?branch=feature", "POST", {"id": "b.one", "text": "On a branch"}, key)[0] == 201
    clone = tmp_path / "branches"
    remote = cluster.urls["n1"].replace("http://", f"http://{key}:@") + f"/git/{PROJECT}.git"
    assert subprocess.run(["git", "clone", "-q", remote, str(clone)], capture_output=True).returncode == 0
    git(clone, "-c", "user.name=Pat", "-c", "user.email=pat@example.com", "commit", "-q", "--allow-empty", "-m", "x")
    pushed = subprocess.run(["git", "push", "-q", "origin", "HEAD:refs/heads/pushed"], cwd=clone, capture_output=True,
                            text=True)
    assert pushed.returncode == 0, pushed.stderr
    old = placement(cluster)
    feature = branch_head_of(cluster, old["leader"], "feature")
    # replicated before the answer: a follower holds both branches, and every node reads the branch's write
    assert any(branch_head_of(cluster, node, "feature") == feature and branch_head_of(cluster, node, "pushed")
               for node in old["followers"] if node in cluster.ids)
    for node in cluster.ids:
        assert request(cluster.urls[node] + "/api/assets/b.one?branch=feature", key=key)[0] == 200, node
        assert request(cluster.urls[node] + "/api/assets/b.one", key=key)[0] == 404, node
    cluster.kill(old["leader"])
    try:
        new = wait_until(lambda: (p := placement(cluster))["leader"] != old["leader"] and p, timeout=30)
        assert branch_head_of(cluster, new["leader"], "feature") == feature
        assert request(url + "/api/assets/b.one?branch=feature", key=key)[0] == 200
        # the new leader merges and deletes branches like the old one, replicated the same way
        assert request(url + "/api/branches/feature/merge", "POST", {}, key)[0] == 200
        assert request(url + "/api/branches/pushed", "DELETE", key=key)[0] == 200
        after = placement(cluster)
        assert any(head_of(cluster, node) == after["head"] and not branch_head_of(cluster, node, "pushed")
                   for node in after["followers"] if node in cluster.ids)
        assert request(url + "/api/assets/b.one", key=key)[0] == 200
    finally:
        rejoin(cluster, old["leader"])
    wait_until(lambda: branch_head_of(cluster, old["leader"], "pushed") == "" and
               head_of(cluster, old["leader"]) == placement(cluster)["head"], timeout=30)


def write_retrying(url: str, key: str, asset: str) -> None:
    """One write through the balancer, retried while the failover window answers 503 (or cuts it short)."""
    def made() -> bool:
        try:
            code = request(url + "/api/assets", "POST", {"id": asset, "text": "Hooked"}, key)[0]
        except OSError:
            return False
        assert code in (201, 409, 503), code  # (409: made by a try whose answer the kill cut short)
        return code in (201, 409)

    wait_until(made, timeout=60)


def test_hooks_are_on_every_node_and_the_new_leader_delivers_every_commit_in_order_after_a_failover(cluster, seeded):
    key, url = seeded[1], cluster.balancer.url
    receiver, hook, old = Receiver(HOOK_SECRET), {"id": "none"}, placement(cluster)
    try:
        code, _, made = request(url + "/api/webhooks", "POST", {"url": receiver.url, "secret": HOOK_SECRET}, key)
        assert code == 201
        hook = json.loads(made)
        for _ in range(3):  # listed whichever node the balancer picks
            code, _, listed = request(url + "/api/webhooks", key=key)
            assert code == 200 and [entry["id"] for entry in json.loads(listed)] == [hook["id"]]
        # copied to the leader's followers before it was answered, and to every node, the secret with it
        # (outside every repository, as on a single node)
        def copies() -> list[Path]:
            return [cluster.data_dir(node) / "webhooks" / f"{PROJECT}.json" for node in cluster.ids]

        wait_until(lambda: all(copy.exists() for copy in copies()), timeout=20)
        for copy in copies():
            assert [h["secret"] for h in json.loads(copy.read_bytes())["hooks"]] == [HOOK_SECRET], copy
            assert copy.stat().st_mode & 0o077 == 0
        for number in range(3):
            assert request(url + "/api/assets", "POST", {"id": f"h.{number}", "text": "Hooked"}, key)[0] == 201
        wait_until(lambda: len(receiver.deliveries) >= 3, timeout=20)
        time.sleep(1.0)  # time for any other node's deliverer to deliver again: the leader alone delivers
        assert len(receiver.deliveries) == 3 and len({d["id"] for d in receiver.deliveries}) == 3
        cluster.kill(old["leader"])
        killed_at = time.monotonic()
        for number in range(3, 6):
            write_retrying(url, key, f"h.{number}")
        new = placement(cluster)
        assert new["leader"] != old["leader"]
        commits = git(cluster.data_dir(new["leader"]) / "projects" / PROJECT, "rev-list", "--first-parent",
                      "--reverse", f"{hook['cursor']}..{new['head']}").split()

        def delivered() -> list[str]:  # each commit's first delivery, in the order received
            firsts: dict[str, str] = {}
            for delivery in receiver.deliveries:
                firsts.setdefault(delivery["id"], delivery["payload"]["data"]["commits"]["to"])
            return list(firsts.values())

        wait_until(lambda: len(delivered()) >= len(commits), timeout=30)
        print(f"webhooks across the failover: {len(commits)} commits, {len(receiver.deliveries)} deliveries "
              f"({len(receiver.deliveries) - len(delivered())} delivered again), all in "
              f"{time.monotonic() - killed_at:.1f} s after the kill")
        assert delivered() == commits  # every commit, in order; one webhook-id per commit, re-sent or not
        assert all(delivery["valid"] for delivery in receiver.deliveries)
    finally:
        receiver.close()
        rejoin(cluster, old["leader"])
        wait_until(lambda: request(url + f"/api/webhooks/{hook['id']}", "DELETE", key=key)[0] in (200, 404),
                   timeout=30)
    # the restarted node catches up: the hook's deletion reaches its copy too
    wait_until(lambda: not (cluster.data_dir(old["leader"]) / "webhooks" / f"{PROJECT}.json").exists(), timeout=30)


@pytest.fixture(scope="module")
def slow_recording(tmp_path_factory, seeded, zookeeper):
    """A cluster of its own whose leaders wait 1.5 s between replicating a write and recording it."""
    started = start_cluster(tmp_path_factory.mktemp("fencing"), seeded, zookeeper, "/fencing",
                            pause_before_record=1.5)
    yield started
    started.stop()


def test_a_leader_frozen_past_its_session_cannot_acknowledge_its_write_and_rolls_it_back(slow_recording, seeded):
    cluster, key = slow_recording, seeded[1]
    old = placement(cluster)
    answer: list[tuple[int, dict, bytes]] = []
    writer = threading.Thread(target=lambda: answer.append(request(
        cluster.urls[old["leader"]] + "/api/assets", "POST", {"id": "f.one", "text": "Frozen"}, key)))
    writer.start()
    time.sleep(0.7)  # the leader made and replicated the commit, and waits to record it
    cluster.signal(old["leader"], signal.SIGSTOP)
    try:
        new = wait_until(lambda: (p := placement(cluster))["leader"] != old["leader"] and p, timeout=30)
    finally:
        cluster.signal(old["leader"], signal.SIGCONT)
    writer.join(60)
    code, headers, _ = answer[0]
    assert code == 503 and headers.get("Retry-After")
    wait_until(lambda: head_of(cluster, old["leader"]) == placement(cluster)["head"], timeout=30)
    cluster.wait_ready(old["leader"])  # its new session
    assert request(cluster.urls[new["leader"]] + "/api/assets/f.one", key=key)[0] == 404
    assert request(cluster.urls[old["leader"]] + "/api/assets/f.one", key=key)[0] == 404
    # and the cluster goes on: the old leader forwards the retried write to the new one
    assert request(cluster.urls[old["leader"]] + "/api/assets", "POST", {"id": "f.one", "text": "Again"}, key)[0] == 201


def test_a_clone_from_any_node_and_a_push_to_a_follower_reach_the_leader_and_its_follower(cluster, seeded,
                                                                                          tmp_path):
    from tests.support import edit_line

    key = seeded[1]
    before = placement(cluster)
    follower = before["followers"][0] if before["followers"][0] in cluster.ids else before["followers"][-1]
    url = cluster.urls[follower].replace("http://", f"http://{key}:@") + f"/git/{PROJECT}.git"
    clone = tmp_path / "clone"
    assert subprocess.run(["git", "clone", "-q", url, str(clone)], capture_output=True).returncode == 0
    edit_line(clone / "locales" / "fr" / "0000.json", "home.title", text="Bienvenue (grappe)")
    git(clone, "-c", "user.name=Pat", "-c", "user.email=pat@example.com", "commit", "-q", "-am", "French title")
    pushed = subprocess.run(["git", "push", "origin", "main"], cwd=clone, capture_output=True, text=True)
    assert pushed.returncode == 0, pushed.stderr
    after = placement(cluster)
    assert after["head"] != before["head"]
    assert any(head_of(cluster, node) == after["head"] for node in after["followers"])
    for _ in range(6):
        code, _, body = request(cluster.balancer.url + "/api/translations/home.title/fr", key=key)
        assert code == 200 and json.loads(body)["translation"] == "Bienvenue (grappe)"


def test_a_project_created_on_one_node_is_placed_and_copied_to_a_follower(cluster):
    created = subprocess.run([sys.executable, "-m", "app.cli", "--data", str(cluster.data_dir("n3")), "project",
                              "create", "Late Shop"], capture_output=True, text=True, check=True, cwd=REPO_ROOT)
    project = created.stdout.strip().splitlines()[-1]

    def placed() -> dict | None:
        found = [p for p in status(cluster.directory)["projects"] if p["id"] == project]
        return found[0] if found and found[0]["leader"] else None

    where = wait_until(lambda: (found := placed()) and found["followers"] and found, timeout=20)
    # n3 leads it first (the only node holding its recorded head); the controller may already have moved the
    # lead to the follower it copied the project to, to spread leaders, so either may lead by now
    assert where["leader"] in cluster.ids and where["head"]
    for node in (where["leader"], *where["followers"]):
        copy = cluster.data_dir(node) / "projects" / project
        wait_until(lambda: copy.is_dir() and subprocess.run(["git", "rev-parse", "main"], cwd=copy,
                                                            capture_output=True, text=True
                                                            ).stdout.strip() == where["head"], timeout=20)
        assert_fsck_clean(copy)


def gloss_cli(data: Path, *args: str) -> str:
    return subprocess.run([sys.executable, "-m", "app.cli", "--data", str(data), *args], capture_output=True,
                          text=True, check=True, cwd=REPO_ROOT).stdout.strip().splitlines()[-1]


def test_a_key_created_on_one_node_works_on_every_node_and_a_revoked_one_is_refused_by_every_node(cluster):
    key = gloss_cli(cluster.data_dir("n1"), "key", "create", PROJECT, "--user", "Kim")

    def works_everywhere() -> bool:
        return all(request(cluster.urls[node] + "/api/auth/verify", key=key)[0] == 200 for node in cluster.ids)

    wait_until(works_everywhere, timeout=20)
    # what `gloss key revoke` does (tests/test_cli.py), made here so that the time is the cluster's alone
    KeyStore(cluster.data_dir("n2") / "keys.json").revoke(key)
    started = time.monotonic()
    wait_until(lambda: all(request(cluster.urls[node] + "/api/auth/verify", key=key)[0] == 401
                           for node in cluster.ids), timeout=20, interval=0.02)
    print(f"revocation seen by every node {time.monotonic() - started:.2f} s after the key file changed")
    time.sleep(1.0)  # and it stays revoked: no node's stale copy brings it back
    assert all(request(cluster.urls[node] + "/api/auth/verify", key=key)[0] == 401 for node in cluster.ids)


def test_writers_and_pushers_racing_across_nodes_keep_every_acknowledged_change(cluster, seeded, tmp_path):
    from tests.support import edit_line

    key = seeded[1]
    stop = threading.Event()
    acknowledged: list[str] = []
    refused: list[int] = []
    writers = [threading.Thread(target=write_until, args=(cluster.urls[node], key, f"r{node}", stop, acknowledged,
                                                          refused)) for node in cluster.ids[:2]]
    pushed: list[str] = []
    url = cluster.urls[cluster.ids[2]].replace("http://", f"http://{key}:@") + f"/git/{PROJECT}.git"
    clone = tmp_path / "racer"
    assert subprocess.run(["git", "clone", "-q", url, str(clone)], capture_output=True).returncode == 0
    for writer in writers:
        writer.start()
    try:
        for number in range(5):
            git(clone, "fetch", "-q", "origin")
            git(clone, "reset", "-q", "--hard", "origin/main")
            text = f"Bienvenue (course {number})"
            edit_line(clone / "locales" / "fr" / "0000.json", "home.title", text=text)
            git(clone, "-c", "user.name=Pat", "-c", "user.email=pat@example.com", "commit", "-q", "-am", text)
            # pushed for a key-level merge: the writers move `main` all the time
            if subprocess.run(["git", "push", "-q", "origin", "HEAD:refs/for/main"], cwd=clone,
                              capture_output=True).returncode == 0:
                pushed.append(text)
    finally:
        stop.set()
        for writer in writers:
            writer.join()
    assert pushed and acknowledged
    assert set(refused) <= {503}  # a write racing a lead move is refused with Retry-After, never lost or wrong
    for asset in acknowledged:
        assert request(cluster.balancer.url + f"/api/assets/{asset}", key=key)[0] == 200, asset
    code, _, body = request(cluster.balancer.url + "/api/translations/home.title/fr", key=key)
    assert code == 200 and json.loads(body)["translation"] == pushed[-1]
    recorded = placement(cluster)["head"]
    wait_until(lambda: all(head_of(cluster, node) == recorded for node in placement(cluster)["followers"]
                           if node in cluster.ids), timeout=30)
    for node in cluster.ids:
        assert_fsck_clean(cluster.data_dir(node) / "projects" / PROJECT)


def test_an_asynchronous_import_through_the_balancer_reports_its_progress_and_is_recorded(cluster, seeded):
    key = seeded[1]
    body = json.dumps({f"bulk.{i}": f"Text {i}" for i in range(500)}).encode()
    answer = urllib.request.urlopen(urllib.request.Request(
        cluster.balancer.url + "/api/import/json?locale=en&async", data=body, method="POST",
        headers={"Authorization": f"Loco {key}", "Content-Type": "application/json"}), timeout=60)
    assert answer.status == 201
    location = answer.headers["Location"]
    assert location.startswith(cluster.balancer.url)  # the URL the client used, not the leader's own

    def finished() -> dict | None:
        code, _, progress = request(location, key=key)  # polled through HAProxy: any node answers
        return json.loads(progress) if code == 200 and json.loads(progress)["progress"] == 100 else None

    assert wait_until(finished, timeout=60)["success"]
    recorded = placement(cluster)
    wait_until(lambda: (p := placement(cluster))["head"] == head_of(cluster, p["leader"]), timeout=20)
    for _ in range(6):
        assert request(cluster.balancer.url + "/api/assets/bulk.499", key=key)[0] == 200
    assert recorded["leader"] in cluster.ids


def test_an_asynchronous_import_whose_node_dies_is_reported_finished_or_failed_by_the_others(cluster, seeded):
    key = seeded[1]
    leader = placement(cluster)["leader"]
    body = json.dumps({f"gone.{i}": f"Text {i}" for i in range(3000)}).encode()
    answer = urllib.request.urlopen(urllib.request.Request(
        cluster.urls[leader] + "/api/import/json?locale=en&async", data=body, method="POST",
        headers={"Authorization": f"Loco {key}", "Content-Type": "application/json"}), timeout=60)
    job = json.loads(answer.read())["id"]
    cluster.kill(leader)  # while it imports (or just after: either way the job must end known)
    try:
        def settled() -> dict | None:
            code, _, progress = request(cluster.balancer.url + f"/api/import/progress/{job}", key=key)
            assert code in (200, 503), (code, progress)  # never 404: the cluster knows the job
            return json.loads(progress) if code == 200 and json.loads(progress)["progress"] == 100 else None

        final = wait_until(settled, timeout=30)
        print("import job settled as", final)
        assert bool(final["success"]) != bool(final["error"])
        def past_failover(url: str) -> tuple[int, str]:
            """The answer at `url` once it is not a 503: the job may settle before a new leader is in place, and
            until then a node that would forward answers 503 (the failover window)."""
            return wait_until(lambda: (answer := request(url, key=key))[0] != 503 and (answer[0], answer[2]),
                              timeout=30)

        imported = past_failover(cluster.balancer.url + "/api/assets/gone.2999")[0]
        assert imported == (200 if final["success"] else 404)
        for node in cluster.ids:  # every node answers alike
            if node != leader:
                assert json.loads(past_failover(cluster.urls[node] + f"/api/import/progress/{job}")[1]) == final
    finally:
        rejoin(cluster, leader)


class Browser:
    """A browser on one node: its cookies, and the form token of the last page it was shown."""

    def __init__(self, url: str):
        self.url = url
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        self.token = ""

    def open(self, path: str, fields: dict | None = None, accept: str = "text/html",
             headers: dict | None = None) -> tuple[int, str]:
        data = urllib.parse.urlencode({"csrf": self.token, **fields}).encode() if fields is not None else None
        try:
            with self.opener.open(urllib.request.Request(self.url + path, data=data,
                                                         headers={"Accept": accept, **(headers or {})}),
                                  timeout=60) as answer:
                code, page = answer.status, answer.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()
        found = re.search(r'name="csrf" value="([^"]+)"', page)
        self.token = found.group(1) if found else self.token
        return code, page


def test_dashboard_edits_made_through_a_follower_are_made_by_the_leader_with_the_sessions_form_token(cluster,
                                                                                                     seeded):
    key = seeded[1]
    before = placement(cluster)
    follower = next(node for node in before["followers"] if node in cluster.ids)
    browser = Browser(cluster.urls[follower])
    browser.open("/")
    assert browser.open("/sign-in", {"key": key})[0] == 200
    # an edit, then the page it goes back to: the leader's commit and message, read on the follower (tried again
    # while it is answered 503: a leadership the controller still moves after the last test's restart)
    code, page = wait_until(lambda: (answer := browser.open("/edit/translation", {
        "asset": "home.title", "locale": "fr", "text": "Salut (tableau)"}))[0] != 503 and answer, timeout=30)
    assert code == 200 and "Saved fr" in page and "Salut (tableau)" in page
    after = placement(cluster)
    assert after["head"] != before["head"] and any(head_of(cluster, node) == after["head"]
                                                   for node in after["followers"] if node in cluster.ids)
    # the translator grid's save (its script asks for JSON), from the text the cell started from
    code, answer = browser.open("/translate/fr/save", {"asset": "home.title", "text": "Salut (grille)",
                                                        "base": "Salut (tableau)"}, accept="application/json")
    assert code == 200 and json.loads(answer)["revision"]
    # the form token is still the session's: a post without it, or with another, changes nothing
    browser.token = "x" * 43
    assert browser.open("/edit/translation", {"asset": "home.title", "locale": "fr", "text": "Forged"})[0] == 400
    # and no client passes for a node naming a key: without the cluster secret the header is nobody's
    stranger = Browser(cluster.urls[follower])
    stranger.open("/")  # signed out, with a form token of its own
    named = {"X-Gloss-Signed-In": KeyStore(cluster.data_dir(follower) / "keys.json").verify(key).id,
             "X-Gloss-Forwarded-By": before["leader"]}
    assert stranger.open("/edit/translation", {"asset": "home.title", "locale": "fr", "text": "Forged"},
                         headers=named)[0] == 401
    for _ in range(3):
        code, _, body = request(cluster.balancer.url + "/api/translations/home.title/fr", key=key)
        assert code == 200 and json.loads(body)["translation"] == "Salut (grille)"


def test_keyless_conversions_answer_on_a_cluster(cluster):
    po = b'msgid ""\nmsgstr ""\n\nmsgid "Hello"\nmsgstr "Bonjour"\n'
    with urllib.request.urlopen(urllib.request.Request(cluster.balancer.url + "/api/convert/po/messages-fr_FR.json",
                                                       data=po, method="POST"), timeout=30) as converted:
        assert converted.status == 200 and json.loads(converted.read()) == {"Hello": "Bonjour"}
