"""`posttrain scene ...`: generate scene tasks, solve them, check answers, render scenes."""

from __future__ import annotations

import json

import typer

from posttrain.console import command_group, emit_json, fail, progress_bar, renamed_option
from posttrain.errors import PosttrainError

app = command_group("3D scene layout tasks: generate, solve, check an answer, render it (docs/scene.md).")


@app.command("generate")
def generate_command(
    difficulty: str = typer.Option("1", "--difficulty", "-d", help="Difficulty 1-6, or several, e.g. 1,2 (spread)."),
    count: int = typer.Option(10, "--count", "-n", min=1, help="How many tasks to write."),
    seed: int = typer.Option(0, "--seed", help="Seed of the batch: the same seed writes the same tasks."),
    out: str = typer.Option(..., "--out", "-o", help="Folder (or fsspec URL) to write the task files into."),
    prompts: bool = typer.Option(True, "--prompts/--no-prompts", help="Also write each task's prompt as NAME.txt."),
) -> None:
    """Write COUNT scene tasks as JSON files (OUT/scene-dD-NNNN.json: the room, the objects with
    sizes and colours, the relations; the schema in docs/scene.md), spread over the difficulties
    as a `scene:` domain spreads them, and beside each the prompt a model reads.

    Example: posttrain scene generate --difficulty 2 --count 5 --seed 0 --out scenes/
    """
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

    from posttrain.storage.artifacts import write_artifact
    from posttrain.tasks.scene.prompt import describe
    from posttrain.tasks.scene.source import SceneSource, parse_difficulties

    try:
        source = SceneSource("generate", parse_difficulties(difficulty, "--difficulty"), seed=seed, size=count)
    except PosttrainError as exc:
        fail(str(exc))
    progress = progress_bar(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    written = []
    try:
        with progress:
            handle = progress.add_task("generating", total=count)
            for index in range(count):
                task = source.scene(index)
                name = f"scene-d{task.difficulty}-{index:04d}"
                written.append(write_artifact(f"{out.rstrip('/')}/{name}.json", task.model_dump_json(indent=2)))
                if prompts:
                    write_artifact(f"{out.rstrip('/')}/{name}.txt", describe(task) + "\n")
                progress.update(handle, advance=1, description=f"generating  {name}")
    except PosttrainError as exc:
        fail(str(exc))
    emit_json({"out": out, "count": len(written), "tasks": [w.rsplit("/", 1)[-1] for w in written]}, None)


@app.command("solve")
def solve_command(task: str = typer.Argument(..., help="A task file from `posttrain scene generate`.")) -> None:
    """Print the reference solver's answer to TASK (JSON): a layout that satisfies every constraint
    of every generated task.

    Example: posttrain scene solve scenes/scene-d2-0000.json > answer.json
    """
    from posttrain.tasks.scene.files import load_task
    from posttrain.tasks.scene.solver import solve

    try:
        print(solve(load_task(task)).model_dump_json(indent=2))
    except PosttrainError as exc:
        fail(str(exc))


@app.command("check")
def check_command(
    task: str = typer.Argument(..., help="A task file from `posttrain scene generate`."),
    answer: str = typer.Argument(..., help="The answer: a scene JSON file, or a model's whole reply holding one."),
) -> None:
    """Score ANSWER against TASK and print JSON: reward (validity gate x the fraction of
    constraints held), valid (and the reason when not), and each constraint with whether it held.
    Exits 0 whatever the score; 2 when a file cannot be read.

    Example: posttrain scene check scenes/scene-d2-0000.json answer.json
    """
    from posttrain.tasks.scene.files import load_reply, load_task
    from posttrain.tasks.scene.scoring import score_reply

    try:
        print(json.dumps(score_reply(load_reply(answer), load_task(task)).to_json(), indent=2))
    except PosttrainError as exc:
        fail(str(exc))


@app.command("render")
def render_command(
    answer: str = typer.Argument(..., help="The answer to draw: a scene JSON file, or a reply holding one."),
    task: str | None = typer.Option(None, "--task", "-t", help="Its task: the room, and the constraints listed."),
    output: str | None = typer.Option(
        None,
        "--output",
        "-o",
        metavar="FILE",
        help="Required. The page to write: a path or an fsspec URL (s3://, memory://).",
    ),
    out: str | None = typer.Option(None, "--out", hidden=True, help="Deprecated spelling of --output."),
    glb: str | None = typer.Option(None, "--glb", help="Where the glTF export goes; default: OUTPUT with .glb."),
    title: str | None = typer.Option(None, "--title", help="The page's title; default: the answer file's name."),
) -> None:
    """Render ANSWER as a self-contained HTML page (Three.js bundled in, no network needed:
    lights, a ground plane, the room's outline, orbit controls; with --task the walkway and the
    constraint results beside the view, failed objects glowing red) and export it as binary glTF
    (.glb). Both are written through the artifact store, so OUT may be any fsspec URL.

    Example: posttrain scene render answer.json --task scenes/scene-d2-0000.json --output scene.html
    """
    out = renamed_option(output, out, "--out", "--output")
    if out is None:
        fail("--output FILE is required: the page to write")
    from posttrain.storage.artifacts import write_artifact
    from posttrain.tasks.scene.files import load_answer, load_reply, load_task
    from posttrain.tasks.scene.gltf import export_glb
    from posttrain.tasks.scene.page import render_page
    from posttrain.tasks.scene.scoring import score_reply

    glb_url = glb or (out.rsplit(".", 1)[0] if out.endswith(".html") else out) + ".glb"
    try:
        scene = load_answer(answer)
        spec = load_task(task) if task else None
        score = score_reply(load_reply(answer), spec) if spec else None
        page = render_page(scene, spec, score, title or answer.rsplit("/", 1)[-1])
        write_artifact(out, page)
        write_artifact(glb_url, export_glb(scene, spec.room if spec else None))
    except PosttrainError as exc:
        fail(str(exc))
    report = {"page": out, "glb": glb_url, "objects": len(scene.objects)}
    if score is not None:
        report.update(reward=score.reward, valid=score.valid)
    emit_json(report, None)
