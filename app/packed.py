"""Tables pickled entry by entry, so that a process reading a large one unpickles only the
entries it looks up.

A process that answers one paste and exits (``errata match``) reads a few dozen of the
catalog's 11,000 records and of the frame index's 100,000 lines; unpickling every entry of
every table took it longer than the answer. A packed table is unpickled as a dict of bytes,
and each entry when first read.
"""

from __future__ import annotations

import pickle
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from typing import Any, overload


class PackedMapping[K: Hashable, V](Mapping[K, V]):
    """A read-only mapping whose values stay pickled until read; each is unpickled once."""

    __slots__ = ("_packed", "_read")

    def __init__(self, packed: dict[K, bytes]) -> None:
        self._packed = packed
        self._read: dict[K, V] = {}

    @classmethod
    def pack(cls, table: Mapping[K, V]) -> PackedMapping[K, V]:
        return cls({key: _dumps(value) for key, value in table.items()})

    def __getitem__(self, key: K) -> V:
        try:
            return self._read[key]
        except KeyError:
            value: V = pickle.loads(self._packed[key])
            self._read[key] = value
            return value

    def __contains__(self, key: object) -> bool:
        return key in self._packed

    def __iter__(self) -> Iterator[K]:
        return iter(self._packed)

    def __len__(self) -> int:
        return len(self._packed)

    def __reduce__(self) -> tuple[Any, ...]:
        return (PackedMapping, (self._packed,))


class PackedSequence[V](Sequence[V]):
    """A read-only sequence whose items stay pickled until read; each is unpickled once."""

    __slots__ = ("_packed", "_read")

    def __init__(self, packed: list[bytes]) -> None:
        self._packed = packed
        self._read: dict[int, V] = {}

    @classmethod
    def pack(cls, items: Iterable[V]) -> PackedSequence[V]:
        return cls([_dumps(item) for item in items])

    @overload
    def __getitem__(self, index: int) -> V: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[V]: ...
    def __getitem__(self, index: int | slice) -> V | Sequence[V]:
        if isinstance(index, slice):
            return [self[number] for number in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self._packed)
        try:
            return self._read[index]
        except KeyError:
            value: V = pickle.loads(self._packed[index])
            self._read[index] = value
            return value

    def __len__(self) -> int:
        return len(self._packed)

    def __reduce__(self) -> tuple[Any, ...]:
        return (PackedSequence, (self._packed,))


def _dumps(value: object) -> bytes:
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
