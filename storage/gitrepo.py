"""The only code that touches Git, as one front: `GitRepo` composes Git's own seams (storage.git): objects and
packs, the branch ref and its durability, the working tree and the index, maintenance, and queries that run the
`git` command.

Objects are written straight into the object store (blobs, trees, commit) and the branch ref is moved last, by a
compare-and-swap under git's own `refs/heads/main.lock`, so a reader that resolves the ref always sees a complete
commit and git's receive-pack and Gloss writers exclude each other. A commit is durable after one round of fsync
(storage.journal); the working tree and the index are brought in line with HEAD after the ref moves, and a
marker file left by a crash in between, or the journal after a power loss, makes recovery repair them.
"""
from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import Callable, Generator, Iterable, Mapping, Sequence

from dulwich.objects import Commit
from dulwich.repo import Repo

from .git.maintenance import Maintenance, remove_stale_dirs
from .git.objects import FILE_MODE, TREE_MODE, BadPack, ObjectStore, Person, pack_of, parse_commit, unpack
from .git.queries import CommitPatch, GitCommandError, GitCommands
from .git.refs import ANY, BRANCH, HEADS, MAIN, ZERO_ID, Branch, Recovery, check_branch_name
from .git.worktree import Staged, WorkTree, parent_dir
from .journal import BRANCH_JOURNALS, branch_of_journal

FEW_OBJECTS = 4  # read_commits reads this many itself: a git process costs more than a few look-ups

__all__ = ["ANY", "MAIN", "FILE_MODE", "TREE_MODE", "ZERO_ID", "CommitPatch", "GitCommandError", "GitRepo", "Person",
           "parent_dir", "remove_stale_dirs"]


class GitRepo:
    """A non-bare repository whose branch `main` is written through plumbing."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.git_dir = self.path / ".git"
        self.objects_dir = self.git_dir / "objects"
        self.commands = GitCommands(self.path)
        self.objects = ObjectStore(self.path)
        self.branch = Branch(self.path, self.objects)
        self.worktree = WorkTree(self.path, self.objects)
        self.recovery = Recovery(self.branch, self.objects, self.worktree, self.commands)
        self.maintenance = Maintenance(self.path, self.commands)
        # Derived data that maintenance brings up to date after the commit-graph, under its lock: functions
        # of the repository that the owner registers (Project registers storage.textchanges.update).
        self.derived_data: list[Callable[[GitRepo], None]] = []

    def close(self) -> None:
        """Release the open pack files."""
        self.objects.close()

    def close_files(self) -> None:
        self.objects.close_files()

    def open_files(self) -> int:
        return self.objects.open_files()

    # ----------------------------------------------------------------- creation
    @classmethod
    def init(cls, path: Path) -> "GitRepo":
        """Create an empty repository whose HEAD points at `main`."""
        path.mkdir(parents=True, exist_ok=False)
        Repo.init(str(path)).close()
        git_dir = path / ".git"
        (git_dir / "HEAD").write_bytes(b"ref: " + BRANCH + b"\n")
        config = git_dir / "config"
        # Gloss does its own maintenance (pack_loose_objects), so git's automatic gc (which receive-pack and
        # porcelain commands would start) is off, and refs stay loose; pushes into the served working tree
        # are refused.
        config.write_text(
            config.read_text()
            + "[gc]\n\tauto = 0\n\tpackRefs = false\n"
            + "[receive]\n\tdenyCurrentBranch = refuse\n"
        )
        (git_dir / "description").write_text("Gloss translation project\n")
        return cls(path)

    def with_quarantine(self, quarantine: Path) -> "GitRepo":
        """A read view that also sees the objects of a push still in git's quarantine directory (dulwich
        reads and git commands alike); close it when done, the quarantine's packs are open."""
        view = GitRepo(self.path)
        view.objects.see_quarantine(quarantine, self.objects)
        view.commands.see_quarantine(quarantine, self.objects_dir)
        return view

    # ----------------------------------------------------------------- queries (storage.git.queries)
    def git(self, *args: str, input: bytes | None = None, check: bool = True) -> bytes:
        return self.commands.git(*args, input=input, check=check)

    def resolve(self, ref: str) -> bytes | None:
        return self.commands.resolve(ref)

    def is_ancestor(self, ancestor: bytes, descendant: bytes) -> bool:
        return self.commands.is_ancestor(ancestor, descendant)

    def merge_base(self, one: bytes, other: bytes) -> bytes | None:
        return self.commands.merge_base(one, other)

    def new_commits(self, tip: bytes) -> list[bytes]:
        return self.commands.new_commits(tip)

    def quarantined_objects(self) -> dict[bytes, tuple[bytes, int]]:
        return self.commands.quarantined_objects()

    def objects_new_from(self, tips: list[bytes]) -> set[bytes]:
        return self.commands.objects_new_from(tips)

    def pack_since(self, heads: Iterable[bytes], bases: Iterable[bytes], max_commits: int) -> bytes | None:
        """A pack of what a copy at `bases` lacks to hold `heads` (whole objects, built in this process);
        None when more than `max_commits` commits lie between."""
        objects = self.objects.objects_since(heads, bases, max_commits)
        return None if objects is None else pack_of(objects)

    def unpacked(self, pack: bytes) -> dict[str, tuple[int, bytes]] | None:
        """The objects of a pack_since pack, checked as git fsck checks them, for move_head to store with the
        ref in its one round of fsync; None when it does not parse or leans on objects this copy lacks."""
        try:
            objects = unpack(pack)
        except BadPack:
            return None
        return None if self.objects.lacks_links(objects) else objects

    def missing_objects(self, object_ids: Iterable[bytes]) -> set[bytes]:
        return self.commands.missing_objects(object_ids)

    def unreachable_objects(self, object_ids: set[bytes]) -> set[bytes]:
        return self.commands.unreachable_objects(object_ids)

    def unreachable_commits(self, commits: set[bytes]) -> set[bytes]:
        return self.commands.unreachable_commits(commits)

    def unified_diff(self, old: bytes, new: bytes) -> bytes:
        return self.commands.unified_diff(old, new)

    def first_parent_patches(self, start: bytes, paths: Sequence[str], stop_at: bytes | None = None,
                             niced: bool = False) -> Generator[CommitPatch, None, None]:
        return self.commands.first_parent_patches(start, paths, stop_at, niced)

    def first_parent_chain(self, start: bytes, niced: bool = False
                           ) -> Generator[tuple[bytes, bytes | None], None, None]:
        return self.commands.first_parent_chain(start, niced)

    def config_flag(self, name: str) -> bool:
        return self.commands.config_flag(name)

    def set_config_flag(self, name: str, value: bool) -> None:
        self.commands.set_config_flag(name, value)

    # ----------------------------------------------------------------- objects (storage.git.objects)
    def object_batch(self, store: bool = True) -> AbstractContextManager[dict[str, tuple[int, bytes]]]:
        return self.objects.object_batch(store)

    def write_blob(self, data: bytes) -> bytes:
        return self.objects.write_blob(data)

    def store_blobs(self, blobs: Iterable[bytes]) -> list[bytes]:
        return self.objects.store_blobs(blobs)

    def write_tree(self, entries: Mapping[str, tuple[int, bytes]]) -> bytes:
        return self.objects.write_tree(entries)

    def write_commit(self, tree: bytes, parents: list[bytes], author: Person, committer: Person,
                     message: str, when: float | None = None) -> bytes:
        return self.objects.write_commit(tree, parents, author, committer, message, when)

    def read_raw(self, hex_id: bytes) -> bytes:
        return self.objects.read_raw(hex_id)

    def read_raw_type(self, hex_id: bytes) -> bytes:
        return self.objects.read_raw_type(hex_id)

    def read_tree(self, hex_id: bytes) -> dict[str, tuple[int, bytes]]:
        return self.objects.read_tree(hex_id)

    def read_commit(self, hex_id: bytes) -> Commit:
        return self.objects.read_commit(hex_id)

    def read_commits(self, hex_ids: Sequence[bytes]) -> dict[bytes, Commit]:
        """Many commits: a few are read here, more by one git process (GitCommands.raw_objects)."""
        if len(hex_ids) <= FEW_OBJECTS:
            return {hex_id: self.read_commit(hex_id) for hex_id in hex_ids}
        return {hex_id: parse_commit(raw) for hex_id, raw in self.commands.raw_objects(hex_ids).items()}

    def read_tag_target(self, hex_id: bytes) -> bytes:
        return self.objects.read_tag_target(hex_id)

    # ----------------------------------------------------------------- the branch ref (storage.git.refs)
    def head(self) -> bytes | None:
        return self.branch.head()

    def move_head(self, commit: bytes, expected: bytes | None | object = ANY,
                  objects: dict[str, tuple[int, bytes]] | None = None,
                  paths: Sequence[str] = (), dirs: Sequence[str] = ()) -> bool:
        return self.branch.move_head(commit, expected, objects, paths, dirs)

    def ref_lock(self) -> AbstractContextManager[None]:
        return self.branch.ref_lock()

    def named_branch(self, name: str) -> Branch:
        """The branch `name` (`main` included), whether or not it exists yet (its head is None then); Invalid
        for a name Git would refuse (checked before the name comes near a file path)."""
        if name == MAIN:
            return self.branch
        return Branch(self.path, self.objects, check_branch_name(name))  # cheap: nothing is read yet

    def branch_names(self) -> list[str]:
        """Every branch of the repository, loose or packed, `main` first, then in name order."""
        heads = self.git_dir / HEADS
        names = {str(path.relative_to(heads)) for path in heads.rglob("*")
                 if path.is_file() and not path.name.endswith(".lock")}
        try:
            for line in (self.git_dir / "packed-refs").read_text("utf-8", "replace").splitlines():
                ref = line.partition(" ")[2]
                if ref.startswith(HEADS):
                    names.add(ref[len(HEADS):])
        except FileNotFoundError:
            pass
        return sorted(names, key=lambda name: (name != MAIN, name))

    def restore_branch(self, name: str) -> bytes | None:
        """Under the write lock: bring a named branch's ref to its journal's latest durable commit."""
        return self.recovery.restore_ref(self.named_branch(name))

    def lagging_branches(self) -> list[str]:
        """The named branches whose ref is not where their journal says (a crash lost a ref's rename)."""
        lagging = []
        for journal in sorted(self.git_dir.glob(BRANCH_JOURNALS + "/[!.]*")):
            branch = self.named_branch(branch_of_journal(journal.name))
            latest, _ = branch.journal.read()
            if latest is not None and latest.head is not None and branch.valid_head() != latest.head.encode():
                lagging.append(branch.name)
        return lagging

    def count_commits(self, tip: bytes) -> int:
        """Commits reachable from `tip`."""
        return int(self.commands.git("rev-list", "--count", tip.decode()).strip() or 0)

    def ahead_behind(self, tip: bytes, other: bytes) -> tuple[int, int]:
        """(commits of `tip` that `other` lacks, commits of `other` that `tip` lacks), in one walk."""
        ahead, behind = self.commands.git("rev-list", "--left-right", "--count",
                                          f"{tip.decode()}...{other.decode()}").split()
        return int(ahead), int(behind)

    def branches_against(self, base: str) -> list[tuple[str, bytes, int, int]]:
        """(name, head, ahead, behind) of every branch, `ahead`/`behind` counted against branch `base` as
        ahead_behind does, `base` first, then in name order: one `git for-each-ref` for all of them.

        Git counts them as the branches' `%(upstream:track)`, each branch being given `base` as its upstream
        in the command's environment only (GIT_CONFIG_KEY_n: any ref name is safe there, `=` included);
        `%(ahead-behind:base)` says it directly but needs git 2.41. A ref torn by a crash is left out."""
        names = [name for name in self.branch_names() if name != base]
        config = {"GIT_CONFIG_COUNT": str(2 * len(names))}
        for number, name in enumerate(names):
            config.update({f"GIT_CONFIG_KEY_{2 * number}": f"branch.{name}.remote",
                           f"GIT_CONFIG_VALUE_{2 * number}": ".",
                           f"GIT_CONFIG_KEY_{2 * number + 1}": f"branch.{name}.merge",
                           f"GIT_CONFIG_VALUE_{2 * number + 1}": HEADS + base})
        listed = self.commands.git("for-each-ref", "--format=%(objectname)%00%(upstream:track,nobracket)%00"
                                   "%(refname)", HEADS, env=config)
        found = []
        for line in listed.decode("utf-8", "replace").splitlines():
            head, track, ref = line.split("\0", 2)
            counts = {kind: int(number) for kind, _, number in (part.partition(" ") for part in track.split(", "))
                      if kind in ("ahead", "behind")}  # "ahead 3, behind 2"; nothing when both are 0
            found.append((ref[len(HEADS):], head.encode(), counts.get("ahead", 0), counts.get("behind", 0)))
        return sorted(found, key=lambda branch: (branch[0] != base, branch[0]))

    def needs_recovery(self, thorough: bool = False) -> bool:
        return self.recovery.needs_recovery(thorough)

    def recover(self, ours: Callable[[str], bool] = lambda path: True, thorough: bool = False) -> list[str]:
        return self.recovery.recover(ours, thorough)

    def make_spares(self) -> None:
        """This process's spares of the temp files a durable step fills (ref lock, pack, index): made after one
        step, once the project's lock is released, for the next (see storage.git.durable.make_spare)."""
        self.branch.make_spares()
        self.objects.make_spares()
        self.worktree.make_spares()

    # ----------------------------------------------------------------- working tree, index (storage.git.worktree)
    def checked_out_commit(self) -> bytes | None:
        return self.worktree.checked_out_commit()

    def worktree_changes(self, changed: Mapping[str, bytes | None],
                         removed_dirs: Iterable[str]) -> tuple[list[str], list[str]]:
        return self.worktree.changes(changed, removed_dirs)

    def stage_worktree(self, files: Mapping[str, tuple[bytes, bytes]]) -> Staged:
        return self.worktree.stage(files)

    def discard_staged(self, staged: Staged) -> None:
        self.worktree.discard(staged)

    def update_worktree(self, changed: Mapping[str, bytes | None], blob_ids: Mapping[str, bytes],
                        commit: bytes, removed_dirs: Iterable[str] = (), flush: bool = False,
                        staged: Staged | None = None) -> None:
        """WorkTree.update; with `flush`, the journal then records the settled state."""
        self.worktree.update(changed, blob_ids, commit, removed_dirs, flush, staged)
        if flush:
            self.branch.settle(commit)

    # ----------------------------------------------------------------- maintenance (storage.git.maintenance)
    def repacks_held_off(self) -> AbstractContextManager[bool]:
        return self.maintenance.repacks_held_off()

    def note_commit(self) -> None:
        self.maintenance.note_commit(lambda busy: self.pack_loose_objects(wait=False, busy=busy))

    def pack_loose_objects(self, wait: bool = True, full: bool | None = None, busy: bool = False) -> None:
        self.maintenance.pack_loose_objects(wait, full, busy, self._update_derived_data)

    def _update_derived_data(self) -> None:
        for update in self.derived_data:
            update(self)

    def write_commit_graph(self) -> None:
        self.maintenance.write_commit_graph()

    def sweep_temp_files(self, older_than: float = 3600.0) -> int:
        return self.maintenance.sweep_temp_files(older_than)
