"""scripts/download_model_binary.sh without network: file:// URLs stand in for
the published weights, so the SHA-1 check and the failure paths run offline.

    python3 -m pytest -q tests/python/test_download_model_binary.py
"""

import hashlib
import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "download_model_binary.sh")

pytestmark = pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")


def model_folder(tmp_path, front_matter):
    folder = tmp_path / "models" / "toy"
    folder.mkdir(parents=True)
    (folder / "README.md").write_text("---\n" + front_matter + "---\n\n# toy\n")
    return folder


def download(folder):
    return subprocess.run(["bash", SCRIPT, str(folder)], capture_output=True, text=True)


@pytest.fixture
def weights(tmp_path):
    path = tmp_path / "published.caffemodel"
    path.write_bytes(os.urandom(4096))
    return path, hashlib.sha1(path.read_bytes()).hexdigest()


def test_downloads_and_checks_the_sha1(tmp_path, weights):
    source, sha1 = weights
    folder = model_folder(tmp_path, f"name: toy\ncaffemodel: toy.caffemodel\n"
                                    f"caffemodel_url: file://{source}\nsha1: {sha1}\n")
    run = download(folder)
    assert run.returncode == 0, run.stderr
    assert (folder / "toy.caffemodel").read_bytes() == source.read_bytes()
    again = download(folder)
    assert again.returncode == 0 and "already there" in again.stdout
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "toy.caffemodel"]


def test_a_wrong_sha1_keeps_nothing(tmp_path, weights):
    source, sha1 = weights
    wrong = "0" * 40
    folder = model_folder(tmp_path, f"name: toy\ncaffemodel: toy.caffemodel\n"
                                    f"caffemodel_url: file://{source}\nsha1: {wrong}\n")
    run = download(folder)
    assert run.returncode == 1
    assert f"has SHA-1 {sha1}, but" in run.stderr and wrong in run.stderr
    assert [p.name for p in folder.iterdir()] == ["README.md"]


def test_no_url_or_no_file_is_one_clear_error(tmp_path):
    folder = model_folder(tmp_path, "name: toy\n")
    run = download(folder)
    assert run.returncode == 1 and "has no caffemodel_url" in run.stderr
    gone = model_folder(tmp_path / "b", f"caffemodel_url: file://{tmp_path}/missing\n")
    run = download(gone)
    assert run.returncode == 1 and "nothing was written" in run.stderr
    assert [p.name for p in gone.iterdir()] == ["README.md"]


def test_every_zoo_readme_has_front_matter_and_urls_only_with_names():
    models = os.path.join(ROOT, "models")
    for name in sorted(os.listdir(models)):
        readme = os.path.join(models, name, "README.md")
        if not os.path.isfile(readme):
            continue
        lines = open(readme).read().split("\n")
        assert lines[0] == "---", readme
        front = lines[1:lines.index("---", 1)]
        keys = dict(line.split(": ", 1) for line in front)
        assert "name" in keys, readme
        if "caffemodel_url" in keys:
            assert keys["caffemodel"].endswith(".caffemodel"), readme
        if "sha1" in keys:
            assert len(keys["sha1"]) == 40 and int(keys["sha1"], 16) >= 0, readme
