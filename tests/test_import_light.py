import subprocess
import sys

HEAVY = ("llama_cpp", "xllamacpp", "torch", "openai", "anthropic", "sentence_transformers", "transformers", "ray")


def test_import_loads_no_heavy_backend():
    code = (
        "import sys, thoughtloom, thoughtloom.core, thoughtloom.lm, thoughtloom.strategies, "
        "thoughtloom.tasks, thoughtloom.eval, thoughtloom.testing\n"
        "thoughtloom.strategies.available()\n"
        f"print([m for m in {HEAVY!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
