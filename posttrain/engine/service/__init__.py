"""The engine as a service for rollout workers, over the one engine loop (engine/stepping_loop.py).

rollout_engine.py (calls as futures, weight updates between steps, the partial-rollout rule,
weight holds) · engine_service.py (the rollout engine behind a socket) · transport.py (the socket:
EngineListener, EngineClient) · replicas.py (N engine services as Ray actors, ReplicaClient) ·
replica_sizing.py (how many replicas the work queue needs).

    service = EngineService(engine, partial_rollouts="continue")
    completions = service.client().generate(requests)   # from any rollout worker
    service.update_weights(named_params, version)        # from the trainer
"""
