"""llama-cpp-python's OpenAI-compatible server, started with the embedded engine's repack rule.

``python -m llama_cpp.server`` loads a model with llama.cpp's default model
parameters, which keep weight repacking on. On CPUs with AMX that path crashes
the server at its first completion (llama.cpp issue 20824; see :mod:`.cpu`).
``python -m thoughtloom.lm.llamacpp_server ARGS`` takes the same arguments as
``python -m llama_cpp.server`` and runs it with ``use_extra_bufts`` off on
such CPUs; elsewhere it is the plain server. The integration tests and the server benchmarks start
their loopback server through it.
"""

from __future__ import annotations

import runpy
import sys

from .cpu import cpu_flags, repack_safe


def main() -> None:
    import llama_cpp.llama_cpp as low

    if not repack_safe(cpu_flags()):
        default_params = low.llama_model_default_params

        def model_params():
            params = default_params()
            params.use_extra_bufts = False
            return params

        low.llama_model_default_params = model_params
    sys.argv[0] = "llama_cpp.server"
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
