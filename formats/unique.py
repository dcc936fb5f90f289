"""Unique names: the `-2`, `-3`... suffix rule shared by readers (unit IDs) and exports (keys)."""
from __future__ import annotations


class UniqueNames:
    """Hands out names, giving a name already taken (within its scope) the smallest free `-N` suffix."""

    def __init__(self) -> None:
        self._taken: dict[str, set[str]] = {}  # scope -> names handed out
        self._next: dict[tuple[str, str], int] = {}  # where the suffix search resumes, so repeats stay linear

    def taken(self, name: str, scope: str = "") -> bool:
        """Whether the name is already handed out in the scope."""
        return name in self._taken.get(scope, ())

    def claim_all(self, wanted: list[str], scope: str = "") -> bool:
        """Claim every name at once when all are distinct and free (what `claim` would hand out unchanged);
        else claim none and say False, so that the caller claims them one by one."""
        taken = self._taken.get(scope)
        fresh = set(wanted)
        if len(fresh) != len(wanted) or (taken is not None and not taken.isdisjoint(fresh)):
            return False
        if taken is None:
            self._taken[scope] = fresh
        else:
            taken |= fresh
        return True

    def claim(self, wanted: str, scope: str = "") -> str:
        """The wanted name if free, else it with the smallest free `-N` suffix (N >= 2); now taken."""
        taken = self._taken.get(scope)
        if taken is None:
            taken = self._taken[scope] = set()
        if wanted not in taken:
            taken.add(wanted)
            return wanted
        number = self._next.get((scope, wanted), 2)
        while f"{wanted}-{number}" in taken:
            number += 1
        self._next[(scope, wanted)] = number + 1
        name = f"{wanted}-{number}"
        taken.add(name)
        return name
