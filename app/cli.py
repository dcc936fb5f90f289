"""The `gloss` command (DESIGN §7; scripts depend on this exact contract)."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from storage.errors import StorageError
from storage.keys import ACCESS_TYPES, KeyStore
from storage.memorygroups import NO_GROUP
from storage.sessions import SessionStore
from storage.store import Store

from .datadir import data_path, default_data_dir


def base_url(host: str, port: int) -> str:
    shown = "localhost" if host in ("0.0.0.0", "127.0.0.1", "::") else host
    return f"http://{shown}:{port}"


def dashboard_line(host: str, port: int) -> str:
    return f"Dashboard: {base_url(host, port)}/ (sign in with an API key)"


def curl_example(key: str, host: str, port: int) -> str:
    return f'curl -H "Authorization: Loco {key}" {base_url(host, port)}/api/auth/verify'


def cmd_serve(args: argparse.Namespace) -> int:
    store, keys = Store(args.data), KeyStore(args.data / "keys.json")
    if not store.project_ids() and not args.cluster:  # a node's projects come from the cluster
        from .seed import seed_demo

        project, key = seed_demo(store, keys)
        print(f"Seeded the demo project {project.id!r} in {args.data}")
        print(f"Full-access API key: {key}")
        print(dashboard_line(args.host, args.port))
        print(f"Try: {curl_example(key, args.host, args.port)}", flush=True)  # stays last: scripts wait for it
    else:
        print(f"Serving {len(store.project_ids())} project(s) from {args.data}; "
              "make a key with: gloss key create PROJECT")
        print(dashboard_line(args.host, args.port), flush=True)
    from .server import run_gunicorn

    settings = web_settings(args)
    workers = args.workers
    if args.cluster:  # one process per node: it holds the node's ZooKeeper session (README, "Running a cluster")
        settings["GLOSS_CLUSTER"] = str(args.cluster.resolve())
        workers = 1
    run_gunicorn(args.data, args.host, args.port, workers, settings)
    return 0


def web_settings(args: argparse.Namespace) -> dict:
    """The dashboard settings given on the command line (the others come from the environment)."""
    from .web.session import IDLE_HOURS, MAX_HOURS, SECURE_COOKIES

    given = {IDLE_HOURS: args.session_idle_hours, MAX_HOURS: args.session_max_hours,
             SECURE_COOKIES: True if args.secure_cookies else None}
    return {name: value for name, value in given.items() if value is not None}


def cmd_project_create(args: argparse.Namespace) -> int:
    from .locales import display_name, parse_locale_code

    source = parse_locale_code(args.source)
    project = Store(args.data).create_project(args.name, source, display_name(source))
    print(f"Created project {args.name!r} with source locale {source}")
    print(project.id)
    return 0


def cmd_project_list(args: argparse.Namespace) -> int:
    store = Store(args.data)
    for project_id in store.project_ids():
        snapshot = store.project(project_id).snapshot()
        locales = ",".join(record["code"] for record in snapshot.locales())
        print(f"{project_id}\t{snapshot.name}\t{len(snapshot)} assets\t{locales}")
    return 0


def cmd_project_tags(args: argparse.Namespace) -> int:
    """Show or set whether pushes may delete or move the project's tags (releases)."""
    project = Store(args.data).project(args.project)
    if args.mode is not None:
        project.set_movable_tags(args.mode == "movable")
    print("movable" if project.movable_tags else "immutable")
    return 0


def cmd_project_memory(args: argparse.Namespace) -> int:
    """Show or set the project's memory group: the projects whose translation memory it shares."""
    store = Store(args.data)
    store.project(args.project)  # the project must exist
    if args.group is not None:
        store.memory_groups.set(args.project, None if args.group == NO_GROUP else args.group)
    print(store.memory_groups.group(args.project) or NO_GROUP)
    return 0


def cmd_key_create(args: argparse.Namespace) -> int:
    store = Store(args.data)
    store.project(args.project)  # the project must exist
    from storage.store import utc_now

    key, record = KeyStore(args.data / "keys.json").create(args.project, args.access, args.user or "",
                                                            args.email or "", utc_now())
    print(f"Created {record.access} key {record.id} for project {args.project} (user {record.user_name})")
    print(key)
    return 0


def cmd_key_list(args: argparse.Namespace) -> int:
    Store(args.data).project(args.project)
    for record in KeyStore(args.data / "keys.json").for_project(args.project):
        print(f"{record.id}\t{record.access}\t{record.user_name}\t{record.user_email}\t{record.created}")
    return 0


def cmd_key_revoke(args: argparse.Namespace) -> int:
    record = KeyStore(args.data / "keys.json").revoke(args.key)
    # the server refuses them anyway (it checks the key of every session); this removes them at once
    ended = SessionStore(args.data).end_for_key(record.id)
    print(f"Revoked key {record.id} ({record.access}, project {record.project}); "
          f"ended {ended} dashboard session(s)")
    return 0


def seed_node_data(directory: Path) -> str:
    """A data directory holding the demo project; its full-access key."""
    from .seed import seed_demo

    directory.mkdir(parents=True, exist_ok=True)
    return seed_demo(Store(directory), KeyStore(directory / "keys.json"))[1]


def cmd_cluster_demo(args: argparse.Namespace) -> int:
    from cluster.demo import run_demo

    return run_demo(args.data, args.nodes, seed_node_data)


def cmd_cluster_status(args: argparse.Namespace) -> int:
    import json

    from cluster.demo import status

    report = status(args.data)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for node in report["nodes"]:
        print(f"node {node['id']}\t{node['url']}\tpid {node['pid']}\t{'alive' if node['alive'] else 'dead'}")
    for project in report["projects"]:
        print(f"project {project['id']}\tleader {project['leader']}\tfollowers {','.join(project['followers'])}"
              f"\thead {project['head']}")
    return 0


def positive_hours(value: str) -> float:
    from .web.session import parse_hours

    try:
        return parse_hours(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gloss", description="Gloss translation management service")
    parser.add_argument("--data", type=Path, default=None,
                        help="data directory (default: $GLOSS_DATA, else ./data)")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="run the API server (gunicorn worker processes)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--workers", type=int, default=int(os.environ.get("GLOSS_WORKERS", "2")))
    serve.add_argument("--session-idle-hours", type=positive_hours, default=None,
                       help="dashboard sessions end after this long unused (default 12, or "
                            "$GLOSS_SESSION_IDLE_HOURS)")
    serve.add_argument("--session-max-hours", type=positive_hours, default=None,
                       help="and this long after sign-in at most (default 168, or $GLOSS_SESSION_MAX_HOURS)")
    serve.add_argument("--secure-cookies", action="store_true",
                       help="always mark the session cookie Secure (it is whenever a request comes over HTTPS; "
                            "or set $GLOSS_SECURE_COOKIES=1)")
    serve.add_argument("--cluster", type=Path, default=None, metavar="FILE",
                       help="run as a node of a cluster described by this JSON file (README, \"Running a cluster\")")
    serve.set_defaults(func=cmd_serve)

    project = commands.add_parser("project", help="create or list projects").add_subparsers(
        dest="action", required=True)
    create = project.add_parser("create", help="create a project; prints its id on the last line")
    create.add_argument("name")
    create.add_argument("--source", default="en", help="source locale (default en)")
    create.set_defaults(func=cmd_project_create)
    project.add_parser("list", help="list projects").set_defaults(func=cmd_project_list)
    tags = project.add_parser("tags", help="show or set whether pushes may delete or move tags (default immutable)")
    tags.add_argument("project")
    tags.add_argument("mode", nargs="?", choices=("immutable", "movable"))
    tags.set_defaults(func=cmd_project_tags)
    memory = project.add_parser("memory", help="show or set the project's memory group (default none: its "
                                               "translation memory is its own)")
    memory.add_argument("project")
    memory.add_argument("group", nargs="?", help=f"a group name, or {NO_GROUP} to leave the group")
    memory.set_defaults(func=cmd_project_memory)

    cluster = commands.add_parser("cluster", help="a cluster on this machine (README, \"Running a cluster\")"
                                  ).add_subparsers(dest="action", required=True)
    demo = cluster.add_parser("demo", help="start ZooKeeper, N nodes and HAProxy on loopback until stopped")
    demo.add_argument("--nodes", type=int, default=3)
    demo.set_defaults(func=cmd_cluster_demo)
    cluster_status = cluster.add_parser("status", help="the demo's nodes and every project's placement and head")
    cluster_status.add_argument("--json", action="store_true")
    cluster_status.set_defaults(func=cmd_cluster_status)

    key = commands.add_parser("key", help="create, list or revoke API keys").add_subparsers(
        dest="action", required=True)
    key_create = key.add_parser("create", help="create a key; prints the key on the last line")
    key_create.add_argument("project")
    key_create.add_argument("--access", choices=ACCESS_TYPES, default="full")
    key_create.add_argument("--user", default="")
    key_create.add_argument("--email", default="")
    key_create.set_defaults(func=cmd_key_create)
    key_list = key.add_parser("list", help="list a project's keys (ids, never the keys)")
    key_list.add_argument("project")
    key_list.set_defaults(func=cmd_key_list)
    key_revoke = key.add_parser("revoke", help="revoke a key, given the key or its id")
    key_revoke.add_argument("key")
    key_revoke.set_defaults(func=cmd_key_revoke)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    args.data = data_path(args.data) if args.data else default_data_dir()
    args.data.mkdir(parents=True, exist_ok=True)
    try:
        return args.func(args)
    except StorageError as error:
        print(f"gloss: {error.message}", file=sys.stderr)
        return 1
    except Exception as error:  # ApiError from locale validation and the like
        message = getattr(error, "message", None)
        if message is None:
            raise
        print(f"gloss: {message}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
