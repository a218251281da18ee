"""Workers on a Ray cluster: the jobs of pndb.workers' local processes, run by Ray actors.

`pndb solve GAME --cluster ADDRESS` (the optional extra `pip install 'pndb[cluster]'`) attaches
a solve to a running Ray cluster (`ray start --head` on one machine, `ray start --address ...`
on the others; ADDRESS as `ray.init` takes it, e.g. `auto` or `HOST:6379`), or with `local`
starts one on this machine for the solve. Nothing changes on the database side: the solve's
process owns the database and the outer search, and each actor, a process with state, makes
its evaluator from the EvaluatorSpec and keeps its table from job to job, so that the same
routing (workers.Router) continues what a table holds. An actor that dies (its node lost)
fails its jobs: they come back empty, and a new actor, on whatever node Ray finds, takes its
place. Ray was chosen over Dask for two reasons: its actors are the stateful workers this
needs (Dask's are experimental and would need the `distributed` scheduler besides), and it
restarts what a lost node held; `bench/parallel.py --cluster local` measures its overhead
per job.
"""

import time

from pndb.workers import Done, Member, Pool, WorkerError, make_evaluator, warm_up


class ClusterError(ValueError):
    """The cluster cannot be used (no Ray, no cluster at the address): the user's to fix."""


class JobRunner:
    """An actor's state: the evaluator (its table kept between jobs)."""

    def __init__(self, spec):
        warm_up(spec)
        self.evaluator = make_evaluator(spec)
        self.started = time.monotonic()

    def run(self, job):
        """A job's LeafResult and the seconds it took."""
        started = time.monotonic()
        (result,) = self.evaluator.evaluate([job])
        return result, time.monotonic() - started


def ray_module():
    try:
        import ray
    except ImportError:
        raise ClusterError("--cluster needs Ray: pip install 'pndb[cluster]'") from None
    return ray


class Actor(Member):
    """The owner's side of one actor (its jobs: ObjectRef -> ticket)."""

    def __init__(self, actor_class, spec):
        super().__init__()
        self.handle = actor_class.remote(spec)


class ClusterPool(Pool):
    """workers.WorkerPool's interface over Ray actors (workers.Pool)."""

    def __init__(self, spec, address, workers=None):
        """Attach to the cluster at ``address`` (``local``: start one here, of ``workers``
        CPUs); ``workers`` actors, by default one per CPU of the cluster."""
        ray = self.ray = ray_module()
        self.spec = spec
        self.started_here = address == "local"
        try:
            if self.started_here:
                ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False, configure_logging=False)
            else:
                ray.init(address=address, log_to_driver=False, configure_logging=False)
        except (ConnectionError, RuntimeError, ValueError) as e:
            raise ClusterError(f"no Ray cluster at {address!r}: {str(e).splitlines()[0] if str(e) else e}") from None
        size = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.actor_class = ray.remote(num_cpus=1, max_restarts=0)(JobRunner)
        super().__init__([Actor(self.actor_class, spec) for _ in range(size)])

    def close(self):
        for a in self.members:
            self.ray.kill(a.handle)
        self.members = []
        if self.started_here:
            self.ray.shutdown()

    def send(self, actor, ticket, job):
        actor.jobs[actor.handle.run.remote(job)] = ticket

    def wait(self, timeout):
        """The jobs that come back within ``timeout`` seconds: each a Done (result None where
        its actor died)."""
        ray = self.ray
        refs = [ref for a in self.members for ref in a.jobs]
        if not refs:
            return []
        ready, _ = ray.wait(refs, num_returns=1, timeout=timeout)
        if ready:  # and whatever else is ready by now
            ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0)
        ready = set(ready)
        done = []
        for index, actor in enumerate(list(self.members)):
            for ref in [r for r in actor.jobs if r in ready]:
                ticket = actor.jobs.pop(ref)
                try:
                    result, seconds = ray.get(ref)
                except ray.exceptions.RayActorError:
                    done.append(Done(ticket, None, index))
                    continue
                except ray.exceptions.RayTaskError as e:
                    raise WorkerError(f"a worker failed: {str(e).splitlines()[0]}") from None
                actor.finished(result, seconds)
                done.append(Done(ticket, result, index))
            if actor.jobs == {} and any(d.result is None and d.worker == index for d in done):
                self.replace(index)
        return done

    def replace(self, index):
        """A new actor in the place of one that died."""
        self.died()
        self.members[index] = Actor(self.actor_class, self.spec)
