"""A GGUF's chat template (``tokenizer.chat_template``), rendered with Jinja2.

The embedded engine renders prompts itself on either llama.cpp library, the
way llama-cpp-python's ``create_chat_completion`` does (and Transformers'
``apply_chat_template``, which both follow): a sandboxed environment with
``trim_blocks`` and ``lstrip_blocks``, loop controls, a pass-through
``{% generation %}`` tag, ``tojson`` without ASCII escaping, and the variables
``messages``, ``bos_token``, ``eos_token``, ``add_generation_prompt``,
``raise_exception`` and ``strftime_now`` (and ``tools`` and the like, None).
The rendered text already holds the template's special tokens (no BOS is
added when it is tokenized) and the template's stop string is its EOS token.
tests/lm/test_chat_template.py checks the output against llama-cpp-python's
own formatter.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

#: Used only for a GGUF without a chat template of its own.
CHATML = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
          "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def _tojson(value: Any, ensure_ascii: bool = False, indent: int | None = None,
            separators: tuple[str, str] | None = None, sort_keys: bool = False) -> str:
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def _raise(message: str) -> None:
    raise ValueError(message)


class ChatTemplate:
    """``render(messages)`` -> (prompt text, stop strings)."""

    def __init__(self, template: str | None, *, bos_token: str, eos_token: str) -> None:
        import jinja2
        import jinja2.ext
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        class _Generation(jinja2.ext.Extension):
            """HuggingFace's ``{% generation %}...{% endgeneration %}``: its body as it is."""

            tags = {"generation"}

            def parse(self, parser: Any) -> Any:
                parser.stream.skip(1)
                return parser.parse_statements(("name:endgeneration",), drop_needle=True)

        env = ImmutableSandboxedEnvironment(loader=jinja2.BaseLoader(), trim_blocks=True,
                                            lstrip_blocks=True,
                                            extensions=[_Generation, jinja2.ext.loopcontrols])
        env.filters["tojson"] = _tojson
        self._template = env.from_string(template or CHATML)
        self.bos_token, self.eos_token = bos_token, eos_token

    def render(self, messages: list[dict[str, str]]) -> tuple[str, list[str]]:
        prompt = self._template.render(
            messages=messages, bos_token=self.bos_token, eos_token=self.eos_token,
            add_generation_prompt=True, raise_exception=_raise,
            strftime_now=lambda fmt: datetime.now().strftime(fmt),
            # defined but empty, as llama-cpp-python passes them (`tools is defined` holds)
            functions=None, function_call=None, tools=None, tool_choice=None)
        return prompt, [self.eos_token]
