from pathlib import Path

import pytest

from posttrain.config import DomainConfig, config_relative_path, dump_config, load_config, parse_config
from posttrain.errors import ConfigError

QUICKSTART = Path(__file__).parents[1] / "examples" / "quickstart.toml"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "run.toml"
    path.write_text(text)
    return path


MINIMAL = '[[domains]]\nname = "a"\nsource = "reasoning-gym:basic_arithmetic"\n'


def test_quickstart_config_is_valid():
    config = load_config(QUICKSTART)
    assert config.model.name == "smollm2-135m"
    assert sum(d.heldout for d in config.domains) >= 200


def test_the_vllm_example_is_the_quickstart_with_vllm_rollouts():
    on_vllm, quickstart = load_config(QUICKSTART.with_name("vllm.toml")), load_config(QUICKSTART)
    assert on_vllm.engine.backend == "vllm"
    assert on_vllm.model_copy(update={"engine": quickstart.engine}) == quickstart


def test_unknown_key_names_file_and_key(tmp_path):
    path = write(tmp_path, MINIMAL + "[optim]\nlearning_rate = 1e-5\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value) == f"{path}: optim.learning_rate: unknown key (did you mean lr?)"


@pytest.mark.parametrize(
    "extra, reason",
    [
        ("[train]\nstepz = 3\n", "train.stepz: unknown key (did you mean steps?)"),
        ("[rollout]\nnum_generations = 4\n", "rollout.num_generations: unknown key (did you mean group_size?)"),
        ("[async]\nmax_stalenes = 1\n", "async.max_stalenes: unknown key (did you mean max_staleness?)"),
        ("[model.lora]\nrank = 8\n", "model.lora.rank: unknown key (did you mean r?)"),
        ("[rollout]\nzzz = 1\n", "rollout.zzz: unknown key"),
        ('[[domains]]\nname = "b"\nsorce = "x"\n', "domains[1].sorce: unknown key (did you mean source?)"),
        ('[[domains]]\nname = "b"\nsource = "reasoning-gmy:x"\n', "(did you mean reasoning-gym:?)"),
        ('[[domains]]\nname = "b"\nsource = "x.jsonl"\nanswer_extraction = "boxd"\n', "(did you mean boxed?)"),
    ],
)
def test_an_unknown_key_or_name_gets_the_one_meant(tmp_path, extra, reason):
    with pytest.raises(ConfigError) as err:
        load_config(write(tmp_path, MINIMAL + extra))
    assert reason in str(err.value)
    assert not str(err.value).endswith("unknown key (did you mean zzz?)")


def test_a_top_level_key_that_belongs_in_a_table_is_pointed_there(tmp_path):
    with pytest.raises(ConfigError) as err:
        load_config(write(tmp_path, "steps = 3\nlearning_rate = 1e-5\n" + MINIMAL))
    assert str(err.value).splitlines() == [
        f"{tmp_path / 'run.toml'}: steps: unknown key (did you mean [train] steps?)",
        f"{tmp_path / 'run.toml'}: learning_rate: unknown key (did you mean [optim] lr?)",
    ]


def test_bad_value_names_key_and_reason(tmp_path):
    path = write(tmp_path, MINIMAL + "[rollout]\ngroup_size = 0\n")
    with pytest.raises(ConfigError, match=r"run.toml: rollout.group_size: Input should be greater than or equal to 1"):
        load_config(path)


def test_bad_domain_field_is_located_by_index(tmp_path):
    path = write(tmp_path, MINIMAL + '[[domains]]\nname = "b"\nsource = "nowhere"\n')
    with pytest.raises(ConfigError, match=r"domains\[1\]\.source: must be 'reasoning-gym"):
        load_config(path)


def test_invalid_toml_and_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(write(tmp_path, "seed = = 1"))
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "absent.toml")


def test_duplicate_domain_names_rejected(tmp_path):
    with pytest.raises(ConfigError, match="repeated: a"):
        load_config(write(tmp_path, MINIMAL + MINIMAL))


def test_resolved_config_round_trips():
    config = load_config(QUICKSTART)
    import tomllib

    again = parse_config(tomllib.loads(dump_config(config)))
    assert again == config


@pytest.mark.parametrize(
    "source, kind, expected",
    [
        ("jsonl:data/a.jsonl", "answer", "jsonl:{base}/data/a.jsonl"),
        ("data/a.jsonl", "answer", "{base}/data/a.jsonl"),
        ("harbor:tasks/terminal", "terminal", "harbor:{base}/tasks/terminal"),
        ("jsonl:/abs/a.jsonl", "answer", "jsonl:/abs/a.jsonl"),
        ("reasoning-gym:basic_arithmetic", "answer", "reasoning-gym:basic_arithmetic"),
    ],
)
def test_task_paths_are_taken_from_the_config_folder(tmp_path, source, kind, expected):
    domain = DomainConfig(name="a", source=source, kind=kind)
    assert domain.absolute_source(tmp_path) == expected.format(base=tmp_path.resolve())
    if source.startswith("reasoning-gym:"):
        assert domain.task_path(tmp_path) is None
    else:
        assert domain.task_path(tmp_path) == Path(expected.format(base=tmp_path).split(":")[-1])


def test_config_relative_path_expands_the_home_folder(tmp_path):
    assert config_relative_path("~/q.txt", tmp_path) == Path.home() / "q.txt"
    assert config_relative_path("q.txt", tmp_path) == tmp_path / "q.txt"


def test_awkward_strings_and_keys_round_trip(tmp_path):
    config = load_config(QUICKSTART)
    config.domains[0].params = {"größe": 'line one\r\nline two\t"quoted" \\ \x7f', "plain": ["a\rb", "é"]}
    config.rollout.system_prompt = "carriage\rreturn"
    text = dump_config(config)
    import tomllib

    assert parse_config(tomllib.loads(text)) == config
    path = tmp_path / "config.toml"
    path.write_text(text)
    assert load_config(path) == config


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("[train]\nworld_size = 2\n[monitor]\nconflict_every = 2\n", "gradient-conflict monitoring runs on one"),
        ("[train]\nworld_size = 2\n[sft]\ndemonstrations = 4\n", r"the \[sft\] warm start trains on one process"),
        ("[train]\nworld_size = 0\n", "train.world_size: Input should be greater than or equal to 1"),
        ('[storage]\nurl = "runs/a"\n', "storage.url: 'runs/a' is not a URL"),
    ],
)
def test_scale_out_settings_that_cannot_work_are_refused_by_name(tmp_path, extra, message):
    path = write(tmp_path, MINIMAL + extra)
    with pytest.raises(ConfigError, match=message) as err:
        load_config(path)
    assert str(err.value).startswith(str(path))


def test_train_device_defaults_to_auto_and_cuda_with_the_builtin_engine_is_one_line(tmp_path):
    assert load_config(write(tmp_path, MINIMAL)).train.device == "auto"
    assert (
        load_config(write(tmp_path, MINIMAL + '[engine]\nbackend = "hf"\n[train]\ndevice = "cuda"\n')).train.device
        == "cuda"
    )
    with pytest.raises(ConfigError) as err:
        load_config(write(tmp_path, MINIMAL + '[train]\ndevice = "cuda"\n'))
    message = str(err.value)
    assert "\n" not in message and 'train.device = "cuda"' in message and 'engine.backend = "vllm" or "hf"' in message
    with pytest.raises(ConfigError, match="train.device: Input should be 'auto', 'cpu' or 'cuda'"):
        load_config(write(tmp_path, MINIMAL + '[train]\ndevice = "gpu"\n'))


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('mode = "async"\n[engine]\nbackend = "vllm"\n', r'mode = "async" needs engine.backend = "builtin" \(the vllm'),
        ('[engine]\nbackend = "vllm"\n[sft]\ndemonstrations = 4\n', r'\[sft\] with engine.backend = "vllm" is not'),
        ('[engine]\nbackend = "vllm"\nspeculative = true\n', "speculative = true needs backend = 'builtin'"),
        ('[engine]\nbackend = "vllm"\n[dispatch]\nexecutor = "ray"\n', 'need engine.backend = "builtin"; with vllm'),
    ],
)
def test_vllm_settings_it_cannot_serve_are_one_line_naming_the_key(tmp_path, extra, message):
    assert load_config(write(tmp_path, MINIMAL + '[engine]\nbackend = "vllm"\n')).engine.backend == "vllm"
    with pytest.raises(ConfigError, match=message) as err:
        load_config(write(tmp_path, extra + MINIMAL))
    assert "\n" not in str(err.value)


def test_the_old_scheduler_table_loads_as_dispatch_with_a_line_saying_so(tmp_path, capsys):
    from posttrain.config import ConfigError, load_config

    path = tmp_path / "old.toml"
    domain = '[[domains]]\nname = "a"\nsource = "reasoning-gym:basic_arithmetic"\n'
    path.write_text(domain + "[scheduler]\nworkers = 2\n")
    assert load_config(path).dispatch.workers == 2
    assert "[scheduler] is now called [dispatch]" in capsys.readouterr().err
    path.write_text(domain + "[scheduler]\nworkers = 2\n[dispatch]\nworkers = 3\n")
    with pytest.raises(ConfigError, match=r"\[scheduler\] and \[dispatch\] are the same table"):
        load_config(path)
