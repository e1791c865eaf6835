"""A fleet sweep: every thread of a database under every combination of config values, on an
executor (`local`: a process pool on this machine; `dask`: a Dask cluster, local or at a scheduler's
address), in batches of threads, the per-(thread, config) rows kept in a results store that a second
run resumes from.

Above `inspector.sweep` (a batch's rows are `sweep.sweep_thread`'s, so a fleet row means what
`sweep --thread` means) and the store; below the CLI and the TUI. Modules:

- `work`: the sweep's settings (`FleetSpec`), the batch a task runs (`run_batch`), a thread's group keys
- `rollup`: the rows added up per config (and per model, day or source), exactly, in any order
- `results`: the results store (`--out`, SQLite or any SQLAlchemy URL)
- `executors`: where the batches run (`LocalExecutor`, `DaskExecutor`)
- `run`: `run_fleet`, the loop that ties them together
- `progress`: threads done, rate and time left, as a bar or a line per 10%
"""

from inspector.fleet.executors import EXECUTORS, DaskUnavailable, Executor, make_executor
from inspector.fleet.rollup import GROUPS, Rollup
from inspector.fleet.run import FleetResult, run_fleet
from inspector.fleet.work import FleetSpec, ThreadResult, run_batch, thread_groups

__all__ = [
    "EXECUTORS",
    "GROUPS",
    "DaskUnavailable",
    "Executor",
    "FleetResult",
    "FleetSpec",
    "Rollup",
    "ThreadResult",
    "make_executor",
    "run_batch",
    "run_fleet",
    "thread_groups",
]
