from collections import Counter

import pytest

from posttrain.dispatch import Job, WorkQueue, next_domain


def drain(queue, now=0.0):
    jobs = []
    while (job := queue.pop(now)) is not None:
        jobs.append(job)
    return jobs


def fill(queue, domain, n, priority=0):
    for i in range(n):
        queue.put(Job(f"{domain}{i}", None, domain=domain, priority=priority))


def test_higher_priority_classes_go_first_then_fifo_within_a_domain():
    queue = WorkQueue()
    fill(queue, "a", 3)
    queue.put(Job("urgent", None, domain="a", priority=5))
    assert [j.id for j in drain(queue)] == ["urgent", "a0", "a1", "a2"]


def test_domains_share_dispatches_by_weight():
    queue = WorkQueue({"a": 3.0, "b": 1.0})
    fill(queue, "a", 30)
    fill(queue, "b", 30)
    first = [j.domain for j in drain(queue)][:20]
    assert Counter(first) == {"a": 15, "b": 5}
    # interleaved, not in blocks: every window of 4 dispatches holds exactly one b
    assert all(first[i : i + 4].count("b") == 1 for i in range(0, 20, 4))


def test_weights_changed_while_jobs_wait_apply_from_the_next_dispatch():
    queue = WorkQueue({"a": 1.0, "b": 1.0})
    fill(queue, "a", 20)
    fill(queue, "b", 20)
    assert Counter(j.domain for j in [queue.pop(0.0) for _ in range(8)]) == {"a": 4, "b": 4}
    queue.set_weights({"b": 3.0})
    assert Counter(j.domain for j in [queue.pop(0.0) for _ in range(8)]) == {"a": 2, "b": 6}
    with pytest.raises(ValueError, match="must be > 0"):
        queue.set_weights({"a": 0.0})


def test_an_idle_domain_does_not_bank_credit():
    queue = WorkQueue({"a": 1.0, "b": 1.0})
    fill(queue, "a", 10)
    drain(queue)  # a ran alone for a while
    fill(queue, "a", 10)
    fill(queue, "b", 10)
    order = [j.domain for j in drain(queue)][:6]
    assert Counter(order) == {"a": 3, "b": 3}  # b does not get ten turns in a row


def test_backoff_hides_a_job_until_its_time_and_retries_keep_their_place():
    queue = WorkQueue()
    fill(queue, "a", 2)
    first = queue.pop(0.0)
    first.not_before = 5.0
    queue.put(first)
    assert queue.pop(1.0).id == "a1"
    assert queue.pop(1.0) is None and queue.next_ready_in(1.0) == pytest.approx(4.0)
    with pytest.raises(ValueError, match="already queued"):
        queue.put(Job("a0", None, domain="a"))
    queue.put(Job("a-late", None, domain="a"))  # arrives after a0's retry was queued...
    assert [j.id for j in drain(queue, now=6.0)] == ["a0", "a-late"]  # ...but a0 kept its place


def test_next_domain_is_the_lowest_pass_with_ties_broken_by_name():
    assert next_domain({"a": 2.0, "b": 1.0}, ["a", "b"]) == "b"
    assert next_domain({"a": 1.0, "b": 1.0}, ["b", "a"]) == "a"
    assert next_domain({}, ["c", "b"]) == "b"
