from transformers import BatchEncoding

from posttrain.models.token_ids import chat_prompt_ids, token_ids


def test_every_shape_a_tokenizer_returns_becomes_a_list():
    assert token_ids([5, 6]) == [5, 6]
    assert token_ids({"input_ids": [5, 6], "attention_mask": [1, 1]}) == [5, 6]
    assert token_ids(BatchEncoding({"input_ids": [5, 6], "attention_mask": [1, 1]})) == [5, 6]


def test_chat_prompt_ends_with_the_assistant_header(tokenizer):
    messages = [{"role": "user", "content": "What is 2 + 3?"}]
    text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert chat_prompt_ids(tokenizer, messages) == token_ids(tokenizer(text, add_special_tokens=False))
    assert tokenizer.decode(chat_prompt_ids(tokenizer, messages)).endswith("<|im_start|>assistant\n")
