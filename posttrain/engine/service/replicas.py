"""Engine replicas as Ray actors: N copies of the builtin engine, each an EngineService on its
own node, serving rollout workers over TCP. The driver keeps its own engine (held-out
evaluation, live gauges); the rollouts go to the replicas.

    replicas = EngineReplicas(config.engine, config.model.name, weights, version, partial_rollouts)
    client = replicas.client()           # picklable; client.for_job(n) prefers replica n % N
    replicas.update_weights(named, v)    # ray.put once, every replica fetches it
    replicas.versions                    # the version each replica holds (-1: waiting for a node)
    replicas.resize(jobs)                # elastic: follow the work queue between min and max

Routing is round robin by job: the controller numbers its jobs and job n prefers replica
n % N. Every job is one task's group, so jobs are alike and counting them balances the load
without any state shared between workers; a job whose replica is gone (its node lost, or a
replacement not placed yet) falls over to the next live one, and a call cut off mid-way fails
with EngineError, so the dispatcher retries the job.

Versions stay truthful without any coordination: each replica stamps every token with the
version of the weights it sampled it with, and the staleness bound is computed from those
stamps (pipeline/experience_buffer.py). A replica that lags (a replacement that was placed between two
updates) only produces staler groups, which the buffer regenerates if they exceed eta.

A replica that dies is replaced at the next weight update: the replacement reserves the same
resources, so Ray places it when a node with room is there, and it starts on the newest
weights (the object ref of the latest update).

Elastic replicas ([engine] min_replicas/max_replicas): at each weight update `resize(jobs)`
sizes the pool to the work queue (replica_sizing.py). A grown replica starts as a replacement
does, and takes jobs once placed; a retired one leaves the routing at once and is killed once
it has no call in flight (a call that raced the routing change falls over to another replica,
or fails and its job is retried).
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Iterable

import torch

from posttrain.config import EngineConfig
from posttrain.dispatch.ray_worker import remote_class
from posttrain.engine.interface import Completion, GenerationRequest
from posttrain.engine.service.replica_sizing import ReplicaSizer
from posttrain.engine.service.rollout_engine import EngineError
from posttrain.engine.service.transport import EngineClient
from posttrain.errors import PosttrainError

RESOLVE_TIMEOUT_S = 5.0  # a replica that has not answered by then is taken for lost
START_TIMEOUT_S = 300.0
# an elastic replica still starting is kept at most this long: past it, one still not placed
# (more likely waiting for a node than loading its model) is let go as any idle replica, so
# that its pending request does not hold an autoscaler to a node the work no longer needs
STARTUP_GRACE_S = 60.0


class EngineReplica:
    """The actor body (wrapped with ray.remote on first use): the model loaded here, the
    driver's weights copied in, an EngineService on TCP at this node's address."""

    def __init__(
        self, settings: EngineConfig, model_spec: str, weights: dict, version: int, partial_rollouts: str
    ) -> None:
        import ray

        from posttrain.engine.factory import engine_for_model
        from posttrain.engine.service.engine_service import EngineService
        from posttrain.models.loading import load_model, load_tokenizer

        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
        tokenizer = load_tokenizer(model_spec)
        engine = engine_for_model(settings, load_model(model_spec), tokenizer, version=version)
        engine.update_weights(weights.items(), version)
        self.node = ray.get_runtime_context().get_node_id()
        self.service = EngineService(engine, partial_rollouts, host=ray.util.get_node_ip_address())

    def address(self) -> tuple:
        client = self.service.client()
        return client.address, client.authkey, self.node

    def update_weights(self, weights: dict, version: int) -> int:
        self.service.update_weights(weights.items(), version)
        return version

    def set_version(self, version: int) -> int:
        self.service.set_version(version)
        return version

    def calls_in_flight(self) -> int:
        gauges = self.service.queue_gauges()
        return gauges["engine_calls_waiting"] + gauges["engine_calls_running"]

    def close(self) -> None:
        self.service.close()


class EngineReplicas:
    """The driver's side: starts the replicas, sends them weights, replaces the dead, and with
    [engine] min_replicas/max_replicas grows and retires them as the work queue asks.

    Replicas live in slots (max_replicas of them, or `replicas`), each with a fixed actor name.
    A slot is in the pool (placed or being placed), retiring (out of the routing, killed once it
    has no call in flight), or off. Routing lists the placed replicas of the pool only."""

    def __init__(
        self,
        settings: EngineConfig,
        model_spec: str,
        weights: Iterable[tuple[str, torch.Tensor]],
        version: int,
        partial_rollouts: str,
        sizer: ReplicaSizer | None = None,
    ) -> None:
        import ray

        self.settings = settings
        self.model_spec = model_spec
        self.partial_rollouts = partial_rollouts
        self.sizer = sizer
        self.namespace = ray.get_runtime_context().namespace
        run = uuid.uuid4().hex[:8]
        slots = settings.max_replicas or settings.replicas
        self.names = [f"posttrain-engine-{run}-{i}" for i in range(slots)]
        self.version = version
        self._weights = ray.put(_cpu_copy(weights))
        self.versions = [-1] * slots
        self.replaced = self.grown = self.retired = 0
        self._actors: list = [None] * slots
        self._placed: list = [None] * slots  # ref of address() until it answered
        self._started_at: list[float] = [0.0] * slots
        self.pool: set[int] = set(range(settings.replica_start))
        self.retiring: set[int] = set()
        self._client = ReplicaClient([], self.namespace)
        for index in sorted(self.pool):
            self._start(index)
        try:  # the run starts with every replica up
            ray.get([ref for ref in self._placed if ref is not None], timeout=START_TIMEOUT_S)
        except ray.exceptions.GetTimeoutError:
            self.close()
            raise PosttrainError(
                f"{len(self.pool)} engine replicas were not all placed within {START_TIMEOUT_S:.0f} s: does a node "
                f"offer replica_resources = {dict(settings.replica_resources)} and replica_cpus = "
                f"{settings.replica_cpus} for each?"
            ) from None
        self._placed = [None] * slots
        for index in self.pool:
            self.versions[index] = version
        self._route()

    @property
    def count(self) -> int:
        return len(self.pool)

    @property
    def pool_versions(self) -> list[int]:
        return [self.versions[index] for index in sorted(self.pool)]

    def client(self) -> ReplicaClient:
        """The controller's client: its routing follows the pool (for_job copies it per job)."""
        return self._client

    def update_weights(self, named_tensors: Iterable[tuple[str, torch.Tensor]] | None, version: int) -> None:
        """The new weights (None: only the version moves) into every placed replica; a replica
        found dead is replaced, one still waiting for a node gets them once placed."""
        import ray

        if named_tensors is not None:
            self._weights = ray.put(_cpu_copy(named_tensors))
        self.version = version
        calls = {}
        for index in sorted(self.pool):
            if not self._ready(index):
                continue
            actor = self._actors[index]
            if named_tensors is None and self.versions[index] >= 0:
                calls[index] = actor.set_version.remote(version)
            else:  # a replacement just placed may have started on older weights than the newest
                calls[index] = actor.update_weights.remote(self._weights, version)
        for index, ref in calls.items():
            try:
                self.versions[index] = ray.get(ref)
            except ray.exceptions.RayActorError:
                self._replace(index)
        self._route()

    def resize(self, jobs: int) -> None:
        """Elastic replicas: follow the work queue (`jobs` waiting + running), then let the
        retiring replicas that have no call left go."""
        if self.sizer is not None:
            now = time.monotonic()
            starting = frozenset(
                rank
                for rank, index in enumerate(sorted(self.pool))
                if not self._is_placed(index) and now - self._started_at[index] < STARTUP_GRACE_S
            )
            target = self.sizer.target(self.count, jobs, now, starting)
            while self.count < target:
                self._grow()
            while self.count > target:
                index = max(self.pool)
                self.pool.discard(index)
                self.retiring.add(index)
            self._route()
        self._let_idle_retirees_go()

    def _grow(self) -> None:
        """A retiring replica back into the pool, else a new one on the newest weights."""
        if self.retiring:
            index = min(self.retiring)
            self.retiring.discard(index)
        else:
            index = min(set(range(len(self.names))) - self.pool)
            self._start(index)
        self.pool.add(index)
        self.grown += 1

    def _let_idle_retirees_go(self) -> None:
        import ray

        for index in sorted(self.retiring):
            actor = self._actors[index]
            try:  # a call that raced the routing change fails over to another replica, or is retried
                busy = actor is not None and ray.get(actor.calls_in_flight.remote(), timeout=RESOLVE_TIMEOUT_S)
            except (ray.exceptions.RayError, ray.exceptions.GetTimeoutError):
                busy = False  # dead or still being placed: nothing to wait for
            if busy:
                continue
            self._kill(index)
            self.retiring.discard(index)
            self.versions[index] = -1
            self.retired += 1

    def _is_placed(self, index: int) -> bool:
        return self._actors[index] is not None and self._placed[index] is None

    def _route(self) -> None:
        """New jobs go to the placed replicas of the pool (to every one of it while none is placed:
        a job then waits for one rather than fails)."""
        placed = [i for i in sorted(self.pool) if self._is_placed(i)]
        self._client.names = [self.names[i] for i in placed or sorted(self.pool)]

    def _ready(self, index: int) -> bool:
        """Placed and answering; a dead one is replaced, a newly placed one brought up to date."""
        import ray

        ref = self._placed[index]
        if ref is None:
            if self._actors[index] is None:
                self._start(index)  # its name was still held at the last try
                return False
            return True
        done, _ = ray.wait([ref], timeout=0)
        if not done:
            return False
        self._placed[index] = None
        try:
            ray.get(ref)
        except ray.exceptions.RayActorError:
            self._replace(index)
            return False
        return True

    def _replace(self, index: int) -> None:
        self._kill(index)
        self.replaced += 1
        self._start(index)

    def _kill(self, index: int) -> None:
        import ray

        if self._actors[index] is not None:
            try:
                ray.kill(self._actors[index], no_restart=True)
            except Exception:  # noqa: BLE001 - already gone with its node
                pass
        self._actors[index] = None
        self._placed[index] = None

    def _start(self, index: int) -> None:
        """A replica on the newest weights (not started while the dead one still holds its name)."""
        self._started_at[index] = time.monotonic()
        options = {
            "name": self.names[index],
            "namespace": self.namespace,
            "num_cpus": self.settings.replica_cpus,
            **({"resources": dict(self.settings.replica_resources)} if self.settings.replica_resources else {}),
        }
        try:
            actor = (
                remote_class(EngineReplica)
                .options(**options)
                .remote(self.settings, self.model_spec, self._weights, self.version, self.partial_rollouts)
            )
        except ValueError:  # Ray has not released the dead replica's name yet: next update
            return
        self._actors[index] = actor
        self._placed[index] = actor.address.remote()
        self.versions[index] = -1

    def close(self) -> None:
        for index in range(len(self.names)):
            self._kill(index)


def _cpu_copy(named_tensors: Iterable[tuple[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    return {name: tensor.detach().to("cpu", copy=True) for name, tensor in named_tensors}


# one EngineClient per replica per worker process: its connections (one per thread) are reused
_CLIENTS: dict[str, tuple[EngineClient, str]] = {}
_CLIENTS_LOCK = threading.Lock()


class ReplicaClient:
    """A rollout worker's handle on the replicas: `generate()` as any InferenceEngine, on the
    replica this job prefers or, if it is gone, the next live one. Picklable (names only: a
    replacement replica takes its predecessor's name, so a retried job finds it).
    `served_by` is "SLOT@NODE" of the replica that answered the last call."""

    def __init__(self, names: list[str], namespace: str | None, preferred: int = 0, cancel=(None, None)) -> None:
        self.names = list(names)
        self.namespace = namespace
        self.preferred = preferred
        self.cancel = cancel
        self.served_by = ""
        self.version = 0

    def for_job(self, number: int) -> ReplicaClient:
        return ReplicaClient(self.names, self.namespace, number % len(self.names))

    def with_cancel(self, cancelled, on_cancel) -> ReplicaClient:
        return ReplicaClient(self.names, self.namespace, self.preferred, (cancelled, on_cancel))

    def __getstate__(self) -> dict:
        return {"names": self.names, "namespace": self.namespace, "preferred": self.preferred}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["names"], state["namespace"], state["preferred"])

    def generate(self, requests: list[GenerationRequest]) -> list[Completion]:
        index, client, node = self._resolve()
        try:
            completions = client.with_cancel(*self.cancel).generate(requests)
        except (EngineError, OSError) as exc:  # OSError: the replica at this address is gone
            with _CLIENTS_LOCK:
                _CLIENTS.pop(self.names[index], None)  # resolve again next time: it may be a replacement
            raise EngineError(f"engine replica {index}: {exc}") from None
        self.served_by = f"{self.names[index].rsplit('-', 1)[1]}@{node}"  # the replica's slot
        self.version = max((c.version for c in completions), default=self.version)
        return completions

    def update_weights(self, named_tensors, version: int) -> None:
        raise EngineError("rollout workers do not update weights; the trainer updates the replicas")

    def _resolve(self) -> tuple[int, EngineClient, str]:
        count = len(self.names)
        # a short look at each first, so that one replica still starting does not hold up the job
        for timeout in (0.5, RESOLVE_TIMEOUT_S):
            for index in [(self.preferred + k) % count for k in range(count)]:
                found = self._lookup(self.names[index], timeout)
                if found is not None:
                    return index, *found
        raise EngineError(f"no engine replica answered within {RESOLVE_TIMEOUT_S} s (all {count} lost or not placed)")

    def _lookup(self, name: str, timeout: float) -> tuple[EngineClient, str] | None:
        with _CLIENTS_LOCK:
            if name in _CLIENTS:
                return _CLIENTS[name]
        import ray

        try:
            actor = ray.get_actor(name, namespace=self.namespace)
            address, authkey, node = ray.get(actor.address.remote(), timeout=timeout)
        except (ValueError, ray.exceptions.RayError):
            return None  # gone, dying, or not placed yet
        found = (EngineClient(address, authkey), node)
        with _CLIENTS_LOCK:
            _CLIENTS[name] = found
        return found
