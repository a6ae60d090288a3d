"""The extent of a run's input: the size of each file it will read, in the order it reads them.

A progress display uses it to tell how far a run has come and how long it has left. Walking
costs a fraction of reading, and it is only done for runs that show their progress.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from evalreg.batch.config import Config
from evalreg.io.readers import STDIN


def input_sizes(
    paths: Iterable[str | os.PathLike[str]],
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    config: Config | None = None,
) -> list[int]:
    """Return the size in bytes of every file a run over `paths` reads, in reading order
    (`config`: the project's configuration, whose include and exclude apply too).

    A file that cannot be examined (or standard input) counts as empty: reading it reports why.
    """
    sizes = []
    for path in (config or Config()).files(paths, include, exclude):
        try:
            sizes.append(0 if path == STDIN else os.stat(path).st_size)
        except OSError:
            sizes.append(0)
    return sizes
