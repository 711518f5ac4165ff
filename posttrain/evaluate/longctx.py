"""The long-context suite: generated tasks with exact answers, beyond needle-in-a-haystack.

    longctx:KINDS:LENGTHS[:COUNT[:SEED]]     e.g. longctx:all:1k,8k:3   longctx:multihop:32k,1m

Kinds:
    retrieval    several key/value facts scattered through filler; give the values of three keys
    multihop     a chain of variable assignments (X3 = X2, X2 = X1, X1 = 48213) scattered among
                 distractor chains; give the value a variable resolves to
    aggregation  a long list of words; name the three most frequent (no ties, by construction)
    consistency  a long log of similar order lines; reproduce the N-th line about one customer,
                 or answer "not present" when that customer has no N-th order

LENGTHS are in the target model's tokens (1k = 1000), from 1k up to 1m; each prompt is within
2% of its length. Tasks are seeded: the same spec and tokenizer give the same tasks. Answers
are checked with the exact verifier on the reply's last non-empty line.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from posttrain.errors import PosttrainError
from posttrain.tasks.records import Task

KINDS = ("retrieval", "multihop", "aggregation", "consistency")
_WORDS = (
    "river stone window garden copper lantern meadow violet harbor orchard pepper ribbon "
    "saddle thunder velvet walnut anchor basket candle dragon falcon glacier hazel island "
    "jasmine kettle lemon marble nectar oyster pebble quartz raven silver timber umbrella "
    "valley willow yonder zephyr amber birch cedar delta ember fern grove heron ivory"
).split()
_NAMES = (
    "Avery Blake Casey Devon Emery Finley Gray Harper Indigo Jordan Kendall Logan Morgan "
    "Noel Oakley Parker Quinn Reese Sawyer Taylor"
).split()
_ITEMS = ("bolts hinges washers brackets gaskets springs rivets pulleys valves sprockets").split()


class LongContextSpecError(PosttrainError):
    pass


@dataclass(frozen=True)
class LongContextSpec:
    kinds: tuple[str, ...]
    lengths: tuple[int, ...]
    count: int = 1
    seed: int = 0


def parse_spec(spec: str) -> LongContextSpec:
    parts = spec.removeprefix("longctx:").split(":")
    if not spec.startswith("longctx:") or len(parts) < 2 or len(parts) > 4:
        raise LongContextSpecError(f"{spec!r}: expected longctx:KINDS:LENGTHS[:COUNT[:SEED]], e.g. longctx:all:1k,8k:3")
    kinds = KINDS if parts[0] == "all" else tuple(k.strip() for k in parts[0].split(","))
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise LongContextSpecError(f"{spec!r}: unknown kind {unknown[0]!r}; choose from all, {', '.join(KINDS)}")
    lengths = tuple(_length(text, spec) for text in parts[1].split(","))
    try:
        count = int(parts[2]) if len(parts) > 2 else 1
        seed = int(parts[3]) if len(parts) > 3 else 0
    except ValueError as exc:
        raise LongContextSpecError(f"{spec!r}: COUNT and SEED are integers") from exc
    if count < 1:
        raise LongContextSpecError(f"{spec!r}: COUNT must be at least 1")
    return LongContextSpec(kinds, lengths, count, seed)


def _length(text: str, spec: str) -> int:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([km]?)\s*", text.lower())
    if not match:
        raise LongContextSpecError(f"{spec!r}: length {text!r} is not like 1k, 32k or 1m")
    value = int(float(match.group(1)) * {"": 1, "k": 1000, "m": 1_000_000}[match.group(2)])
    if not 500 <= value <= 1_000_000:
        raise LongContextSpecError(f"{spec!r}: lengths go from 1k to 1m tokens, got {text}")
    return value


def generate_tasks(spec: str | LongContextSpec, tokenizer) -> list[Task]:
    parsed = parse_spec(spec) if isinstance(spec, str) else spec
    tasks = []
    for kind in parsed.kinds:
        for length in parsed.lengths:
            for index in range(parsed.count):
                rng = random.Random(f"{parsed.seed}:{kind}:{length}:{index}")
                tasks.append(_make(kind, length, index, rng, tokenizer))
    return tasks


# ---- one task ----------------------------------------------------------------------------------


class _Counter:
    """Token counts of text pieces, with a per-character estimate for filler so a 1M-token
    document is not tokenized piece by piece."""

    def __init__(self, tokenizer) -> None:
        self.tokenizer = tokenizer

    def count(self, text: str) -> int:
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])


def _filler_sentence(rng: random.Random) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(6, 12))]
    return " ".join(words).capitalize() + "."


def _document(
    pieces: list[str], target_tokens: int, question: str, counter: _Counter, rng: random.Random, filler=_filler_sentence
) -> str:
    """Scatter `pieces` (in order) through filler so the whole prompt is about target_tokens."""
    tolerance = max(10, target_tokens // 100)
    fixed = counter.count(question) + sum(counter.count(p) + 1 for p in pieces) + 16
    sample = " ".join(filler(rng) for _ in range(200))
    per_char = counter.count(sample) / len(sample)
    sentences, size = [], 0
    while size < max(0, (target_tokens - fixed) / per_char):
        sentences.append(filler(rng))
        size += len(sentences[-1]) + 1
    slots = sorted(rng.sample(range(len(sentences) + 1), len(pieces)))

    def render(count: int) -> str:
        """The document with the first `count` filler sentences (the pieces keep their slots)."""
        body: list[str] = []
        cursor = 0
        for slot, piece in zip(slots, pieces):
            body.extend(sentences[cursor : min(slot, count)])
            body.append(piece)
            cursor = min(slot, count)
        body.extend(sentences[cursor:count])
        return " ".join(body) + "\n\n" + question

    count = len(sentences)
    text = render(count)
    for _ in range(12):  # a few sentences at a time toward the target; each is ~10 tokens
        actual = counter.count(text)
        if abs(actual - target_tokens) <= tolerance:
            break
        step = max(1, abs(actual - target_tokens) // 12)
        if actual > target_tokens:
            count = max(0, count - step)
        else:
            while count + step > len(sentences):
                sentences.append(filler(rng))
            count += step
        text = render(count)
    return text


def _make(kind: str, length: int, index: int, rng: random.Random, tokenizer) -> Task:
    counter = _Counter(tokenizer)
    if kind == "retrieval":
        keys = rng.sample(_WORDS, 8)
        values = {k: str(rng.randint(10000, 99999)) for k in keys}
        pieces = [f"The secret code for {k} is {values[k]}." for k in keys]
        asked = rng.sample(keys, 3)
        question = (
            f"What are the secret codes for {asked[0]}, {asked[1]} and {asked[2]}? "
            "Answer on the last line with the three codes, comma-separated, in that order."
        )
        answer = ", ".join(values[k] for k in asked)
        document = _document(pieces, length, question, counter, rng)
    elif kind == "multihop":
        value = str(rng.randint(10000, 99999))
        names = [f"V{n}" for n in rng.sample(range(100, 999), 12)]
        chain, distractors = names[:4], names[4:]
        pieces = [f"Let {chain[0]} = {value}."] + [f"Let {b} = {a}." for a, b in zip(chain, chain[1:])]
        for a, b in zip(distractors[::2], distractors[1::2]):
            pieces += [f"Let {a} = {rng.randint(10000, 99999)}.", f"Let {b} = {a}."]
        order = list(range(len(pieces)))
        # the chain keeps its order (each assignment after the one it reads); distractors mix in
        chain_slots = sorted(rng.sample(order, 4))
        rest = [p for i, p in enumerate(pieces) if i >= 4]
        mixed, chain_iter, rest_iter = [], iter(pieces[:4]), iter(rest)
        for position in order:
            mixed.append(next(chain_iter) if position in chain_slots else next(rest_iter))
        question = (
            f"Following the assignments above, what number does {chain[-1]} hold? "
            "Answer on the last line with the number only."
        )
        answer = value
        document = _document(mixed, length, question, counter, rng)
    elif kind == "aggregation":
        top = rng.sample(_WORDS, 3)
        others = [w for w in _WORDS if w not in top]
        question = (
            "Above is a long list of words. Which three words occur most often? Answer on the last "
            "line with the three words, comma-separated, most frequent first."
        )
        per_token = counter.count(" ".join(rng.choice(_WORDS) for _ in range(500))) / 500
        total = max(60, int((length - counter.count(question) - 16) / per_token))
        for _ in range(4):  # refine the word count on the real token count
            words = _word_list(total, top, others, rng)
            document = " ".join(words) + "\n\n" + question
            actual = counter.count(document)
            if abs(actual - length) <= max(10, length // 100):
                break
            total = max(60, int(total * length / actual))
        answer = ", ".join(top)
    else:  # consistency
        customers = rng.sample(_NAMES, 6)
        target = customers[0]
        per_line = counter.count("Order 00001: Avery ordered 12 valves") + 1
        question_tokens = counter.count(_consistency_question(target, 10))
        pool = [
            (rng.choice(customers), rng.randint(2, 99), rng.choice(_ITEMS))
            for _ in range(int(1.2 * length / per_line) + 40)
        ]
        lines = [f"Order {n:05d}: {c} ordered {q} {item}" for n, (c, q, item) in enumerate(pool, start=1)]
        n_lines = max(20, int((length - question_tokens) / per_line))
        for _ in range(8):  # fit the line count to the real token count
            actual = counter.count("\n".join(lines[:n_lines])) + question_tokens + 2
            if abs(actual - length) <= max(5, length // 200):
                break
            n_lines = max(20, min(len(lines), n_lines + (length - actual) // per_line))
        lines = lines[:n_lines]
        mine = [line for line in lines if f": {target} ordered" in line]
        if mine and rng.random() < 0.75:
            nth = rng.randint(1, len(mine))
            answer = mine[nth - 1]
        else:
            nth = len(mine) + rng.randint(1, 5)
            answer = "not present"
        document = "\n".join(lines) + "\n\n" + _consistency_question(target, nth)
    return Task(
        id=f"longctx-{kind}-{_label(length)}-{index}",
        domain=f"longctx-{kind}",
        instruction=document,
        kind="answer",
        verifier="exact",
        answer=answer,
        metadata={"category": kind, "length_tokens": length, "answer_extraction": "last_line"},
    )


def _consistency_question(target: str, nth: int) -> str:
    return (
        f"Reproduce exactly the order line of {target}'s order number {nth} (counting {target}'s orders from "
        f"the first). If {target} has fewer than {nth} orders, answer: not present. Put the answer on the last line."
    )


def _word_list(total: int, top: list[str], others: list[str], rng: random.Random) -> list[str]:
    """`total` words in which the three `top` words are the most frequent, in that order, by a
    clear margin (8%, 6% and 4.5% of the list; every other word under 3%)."""
    counts = {w: int(total * share) for w, share in zip(top, (0.08, 0.06, 0.045))}
    words = [w for w, c in counts.items() for _ in range(c)]
    words += [others[i % len(others)] for i in range(total - len(words))]
    if max(words.count(w) for w in others[:1]) >= counts[top[2]]:
        raise LongContextSpecError(f"aggregation with {total} words: cannot keep the top three ahead")
    rng.shuffle(words)
    return words


def _label(length: int) -> str:
    if length >= 1_000_000 and length % 1_000_000 == 0:
        return f"{length // 1_000_000}m"
    if length % 1000 == 0:
        return f"{length // 1000}k"
    return str(length)
