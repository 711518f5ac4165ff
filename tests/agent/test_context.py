from posttrain.agent.context import LayeredContext
from posttrain.agent.trajectory import TurnRecord, training_segments
from posttrain.models.chat_tokens import ChatTokens


def make(tokenizer, max_tokens=4096):
    return LayeredContext(ChatTokens(tokenizer), "SYSTEM: tools here", "Task: fix the build.", max_tokens, reserve=64)


def reply(tokenizer, text):
    return tokenizer(text, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]


def test_each_prompt_extends_the_last_prompt_and_reply_token_for_token(tokenizer):
    context = make(tokenizer)
    previous = context.prompt_ids(0)
    for turn in range(5):
        completion = reply(tokenizer, f"step {turn}: run make")
        context.add_turn(completion, f"output of step {turn}", f"step {turn}")
        prompt = context.prompt_ids(turn + 1)
        assert prompt[: len(previous) + len(completion)] == previous + completion
        previous = prompt
    text = tokenizer.decode(previous)
    assert text.index("SYSTEM") < text.index("Task:") < text.index("output of step 0") < text.index("step 4")


def test_scratch_sits_at_the_end_and_is_pruned_first(tokenizer):
    context = make(tokenizer)
    context.add_turn(reply(tokenizer, "ls"), "a b c", "ls")
    stable = context.prompt_ids(1)
    context.note("2 turns left")
    with_note = context.prompt_ids(1)
    header = context.chat.header
    assert with_note[: len(stable) - len(header)] == stable[: -len(header)]  # only the end moved
    assert "2 turns left" in tokenizer.decode(with_note[len(stable) - len(header) :])
    tight = make(tokenizer, max_tokens=len(with_note) + 64 - 1)  # one token short of room for the note
    tight.add_turn(reply(tokenizer, "ls"), "a b c", "ls")
    tight.note("2 turns left")
    assert tight.prompt_ids(1) == stable
    assert [(e.rule, e.dropped_turns) for e in tight.events] == [("drop_scratch", 0)]


def test_the_oldest_working_turns_are_summarised_away_under_the_limit(tokenizer):
    context = make(tokenizer, max_tokens=400)
    for turn in range(12):
        context.add_turn(reply(tokenizer, f"command number {turn}"), "x" * 80, f"ran command {turn}")
    prompt = context.prompt_ids(12)
    assert len(prompt) <= 400 - 64
    event = context.events[-1]
    assert event.rule == "drop_oldest_working" and event.dropped_turns >= 1 and event.tokens_after < event.tokens_before
    text = tokenizer.decode(prompt)
    assert "earlier turns were removed" in text and "ran command 0" in text  # the summary line stays
    assert "command number 11" in text and "command number 0" not in text


def test_training_segments_mask_everything_but_the_models_tokens():
    turns = [
        TurnRecord(0, [1, 2, 3], [10, 11], [-0.1, -0.2], [0, 0], "a"),
        TurnRecord(1, [1, 2, 3, 10, 11, 50, 51], [12], [-0.3], [0, 0], "b"),
        TurnRecord(2, [1, 2, 99], [13], [-0.4], [0], "c"),
    ]  # pruned: a new segment
    first, second = training_segments(turns)
    assert first.prompt_ids == [1, 2, 3] and first.completion_ids == [10, 11, 50, 51, 12]
    assert first.completion_mask == [1, 1, 0, 0, 1] and first.logprobs == [-0.1, -0.2, 0.0, 0.0, -0.3]
    assert second.prompt_ids == [1, 2, 99] and second.completion_mask == [1]
