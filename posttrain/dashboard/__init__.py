"""`posttrain dashboard`: a local web app over run directories.

    posttrain dashboard runs/quickstart runs/eval-oracle runs/inspect --port 8765

Training runs (metrics.jsonl, trajectories.sqlite), eval runs (results.jsonl, trajectories/)
and inspections (report.json) open side by side. Everything is read from the directories as
they are on disk, while they are being written too; nothing is written into them.

    from posttrain.dashboard.app import create_app
    app = create_app([Path("runs/quickstart")])   # a FastAPI app; serve it with uvicorn
"""
