"""CONTRIBUTING's "A language" recipe, walked with a made-up fourth language on a copy of the product: register it
once, copy a language folder, add its knowledge-base files; the advisor then answers in it, with its own templates."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("contract", "tools", "kb", "agent", "web", "cli", "prompts")
RUN = "import sys; from cli.app import run; sys.argv = ['gpu-advisor', *sys.argv[1:]]; run()"


def _marked(value: Any) -> Any:
    """Every template string with its 'Rent' replaced by 'Hire': the new language's own wording, easy to spot."""
    if isinstance(value, dict):
        return {key: _marked(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_marked(item) for item in value]
    return value.replace("Rent ", "Hire ") if isinstance(value, str) else value


def _product_with_testish(tmp_path: Path) -> Path:
    """A copy of the product with language 'xx' added by the recipe's steps (only those)."""
    root = tmp_path / "repo"
    for folder in PRODUCT:
        shutil.copytree(ROOT / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    registry = root / "contract" / "languages.py"  # step 1: the one registry entry
    text = registry.read_text(encoding="utf-8")
    text = text.replace('Language = Literal["it", "id", "en"]', 'Language = Literal["it", "id", "en", "xx"]')
    text = text.replace(
        '    "en": LanguageInfo("English", "english", "STOPWORDS_EN"),\n',
        '    "en": LanguageInfo("English", "english", "STOPWORDS_EN"),\n'
        '    "xx": LanguageInfo("Testish", "english", "STOPWORDS_EN"),\n',
    )
    assert text.count('"xx"') == 2
    registry.write_text(text, encoding="utf-8")
    shutil.copytree(root / "prompts" / "en", root / "prompts" / "xx")  # step 2: the language's folder
    templates = root / "prompts" / "xx" / "recommend.json"
    templates.write_text(json.dumps(_marked(json.loads(templates.read_text(encoding="utf-8")))), encoding="utf-8")
    data = root / "kb" / "data"  # step 3: the knowledge base's files for the language
    for path in [*data.glob("*.en.md"), *data.glob("*.en.json"), *data.glob("*.en.txt")]:
        shutil.copy(path, path.with_name(path.name.replace(".en.", ".xx.")))
    return root


def _cli(root: Path, home: Path, *args: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(root), "GPU_ADVISOR_HOME": str(home)}
    done = subprocess.run(
        [sys.executable, "-c", RUN, *args], capture_output=True, text=True, timeout=300, cwd=root, env=env
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_new_language_is_its_registry_entry_its_folder_and_its_kb_files(tmp_path: Path) -> None:
    root = _product_with_testish(tmp_path)
    result = _cli(
        root,
        tmp_path / "home",
        "recommend",
        "--json",
        "--lang",
        "xx",
        "QLoRA on Llama 3.1 8B, 10k examples, budget 50 dollars",
    )
    assert result["language"] == "xx" and result["offers"]
    assert result["answer"].replace("**", "").startswith("Hire ")
    faq = _cli(root, tmp_path / "home", "ask", "--json", "--lang", "xx", "can I use spot instances?")
    assert faq["language"] == "xx" and faq["citations"]
