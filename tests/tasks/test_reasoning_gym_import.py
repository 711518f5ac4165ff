"""reasoning-gym imported without cellpylib/matplotlib, which load only when a game-of-life task
needs them; each check in a fresh interpreter, whose sys.modules nothing else has touched."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_the_import_defers_cellpylib_and_a_game_of_life_task_still_loads_it():
    out = run(
        "import sys\n"
        "from posttrain.tasks.reasoning_gym_import import import_reasoning_gym\n"
        "gym = import_reasoning_gym()\n"
        "print('matplotlib' in sys.modules, 'cellpylib.ca_functions' in sys.modules)\n"
        "data = gym.create_dataset('game_of_life', seed=1, size=1)\n"
        "entry = data[0]\n"
        "print('matplotlib' in sys.modules, data.score_answer(entry['answer'], entry))\n"
    )
    assert out.splitlines() == ["False False", "True 1.0"]


def test_a_reasoning_gym_source_builds_and_scores_without_cellpylib():
    out = run(
        "import sys\n"
        "from posttrain.tasks.sources import ReasoningGymSource\n"
        "from posttrain.tasks.verifiers import VERIFIERS\n"
        "source = ReasoningGymSource('add', 'basic_arithmetic', 0, 4, {}, '{question}', 'last_number')\n"
        "task = source.get(0)\n"
        "right = VERIFIERS[task.verifier](f'the answer is {task.answer}', task).passed\n"
        "wrong = VERIFIERS[task.verifier]('the answer is 1000000', task).passed\n"
        "print(right, wrong, 'cellpylib.ca_functions' in sys.modules)\n"
    )
    assert out == "True False False"
