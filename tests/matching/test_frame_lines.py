import re

from hypothesis import given
from hypothesis import strategies as st

from app.matching import frames, values
from app.matching.frames import FrameIndex

from .catalog import TRACEBACK_LINES

LINES = [
    *TRACEBACK_LINES,
    '  File "/x/site-packages/jax/_src/pallas/core.py", line 770, in check_invariants',
    '\t File "/x/jax/_src/pallas/mosaic_gpu/lowering.py", line 1285, in lower_jaxpr',
    "  File ~/src/jax/jax/_src/pallas/core.py:770, in check_invariants(self)",
    '  File "C:\\\\x\\\\jax\\\\_src\\\\pallas\\\\core.py", line 9, in f',
    'x File "/x/jax/_src/pallas/core.py", line 770, in check_invariants',
    'File "/x/jax/_src/pallas/core.py", line 770, in check_invariants File "a", line 1, in g',
    '  File "user.py", line 3, in <module>',
    '  File "<string>", line 3, in <module>',
    '  File "/home/me/python3.11/site-packages-not/x.py", line 3, in f',
    '  File "/usr/lib/python3.11/json/x.py", line 3, in f',
    '\u00a0 File "/x/jax/_src/pallas/core.py", line 1, in f',
]
PASTES = st.lists(st.sampled_from(LINES), max_size=30)


@given(PASTES)
def test_the_users_frames_are_the_frames_of_no_library(lines: list[str]) -> None:
    expected = [
        (number, found["file"], found["line"])
        for number, line in enumerate(lines)
        if (found := values._INDENTED_PYTHON_FRAME.match(line)) is not None
        and not re.search(values._LIBRARY, found["file"])
        and not found["file"].startswith("<")
    ]
    read = [
        (number, found["file"], found["line"])
        for number, line in enumerate(lines)
        if (found := values._INDENTED_USER_FRAME.match(line)) is not None
    ]
    assert read == expected


@given(PASTES, st.sets(st.integers(0, 29)))
def test_the_jax_frames_are_those_of_the_chosen_lines(lines: list[str], chosen: set[int]) -> None:
    index = FrameIndex.load()
    expected = [
        frame
        for number in sorted(chosen)
        if number < len(lines)
        and (found := frames.INDENTED_FRAME.match(lines[number])) is not None
        and (frame := index.frame_of(found, number)) is not None
    ]
    assert index.frames(lines, chosen) == expected
    assert any(frame.file.startswith("jax/") for frame in index.frames(LINES, range(len(LINES))))
