import pytest


@pytest.fixture(scope="session")
def s3_server():
    """A real S3-compatible server (moto's, over HTTP on a free port) and its endpoint URL; the
    clients find it through the environment, as a user's would. One per session: fsspec caches
    its S3 file system, endpoint included, for the life of the process."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def s3_bucket(s3_server, monkeypatch):
    """A fresh bucket on the server, with the environment pointing the S3 clients at it."""
    import uuid

    import boto3

    for key, value in {
        "AWS_ENDPOINT_URL": s3_server,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(key, value)
    name = f"runs-{uuid.uuid4().hex[:8]}"
    boto3.client("s3").create_bucket(Bucket=name)
    return name


@pytest.fixture
def machine_cache(tmp_path):
    """machine_cache(NAME) -> the $POSTTRAIN_CACHE of another machine that has never seen a run
    (no working copies, no outputs), but has the converted SmolLM2 that every machine makes once:
    a link to this one's. Converting the GGUF again costs ~35 s of CPU per machine and is no part
    of what a fresh machine's resume tests."""
    from posttrain.cache import cache_dir
    from posttrain.models.smollm2 import smollm2_dir

    models = smollm2_dir().parent
    assert models == cache_dir() / "models"

    def make(name: str):
        root = tmp_path / name
        root.mkdir(parents=True, exist_ok=True)
        if not (root / "models").exists():
            (root / "models").symlink_to(models, target_is_directory=True)
        return root

    return make
