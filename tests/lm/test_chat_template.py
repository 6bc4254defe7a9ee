"""Chat templates render as llama-cpp-python's create_chat_completion renders them."""

import pytest

from thoughtloom.lm.chat_template import CHATML, ChatTemplate

MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Größe? {\"a\": 1}"},
            {"role": "assistant", "content": "Hello."}, {"role": "user", "content": "What is 2+2?"}]

TEMPLATES = {
    "chatml": CHATML,
    # trim_blocks/lstrip_blocks, loop controls, `tools is defined`, tojson without ASCII escapes
    "features": ("{{ bos_token }}{% for m in messages %}\n"
                 "  {% if m['role'] == 'system' %}{% continue %}{% endif %}\n"
                 "  <{{ m['role'] }}>{{ m['content'] | tojson }}</s>\n"
                 "{% endfor %}\n"
                 "{% if tools is defined %}[tools defined]{% endif %}"
                 "{% if add_generation_prompt %}<assistant>{% endif %}"),
    "generation": ("{% for m in messages %}{% if m['role'] == 'assistant' %}{% generation %}"
                   "{{ m['content'] }}{% endgeneration %}{% else %}{{ m['content'] }}{% endif %}|"
                   "{% endfor %}{{ eos_token }}"),
}


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_renders_as_llama_cpp_python_does(name):
    formatter = pytest.importorskip("llama_cpp.llama_chat_format", reason="needs llama-cpp-python (dev extra)")
    ref = formatter.Jinja2ChatFormatter(template=TEMPLATES[name], eos_token="</s>", bos_token="<s>")(
        messages=MESSAGES)
    prompt, stop = ChatTemplate(TEMPLATES[name], bos_token="<s>", eos_token="</s>").render(MESSAGES)
    assert prompt == ref.prompt
    assert stop == ref.stop
    assert ref.added_special  # so the engine tokenizes without adding a BOS of its own


def test_the_features_template_renders_what_it_says():
    prompt, stop = ChatTemplate(TEMPLATES["features"], bos_token="<s>", eos_token="</s>").render(MESSAGES)
    assert prompt == ('<s>  <user>"Größe? {\\"a\\": 1}"</s>\n  <assistant>"Hello."</s>\n'
                      '  <user>"What is 2+2?"</s>\n[tools defined]<assistant>')
    assert stop == ["</s>"]


def test_no_template_falls_back_to_chatml():
    prompt, _ = ChatTemplate(None, bos_token="", eos_token="<|im_end|>").render(MESSAGES[1:2])
    assert prompt == '<|im_start|>user\nGröße? {"a": 1}<|im_end|>\n<|im_start|>assistant\n'


def test_a_template_that_refuses_the_chat_raises():
    template = "{% if messages[0]['role'] != 'user' %}{{ raise_exception('roles must alternate') }}{% endif %}"
    with pytest.raises(ValueError, match="roles must alternate"):
        ChatTemplate(template, bos_token="", eos_token="").render(MESSAGES)


def test_the_sandbox_keeps_templates_off_python_internals():
    from jinja2.exceptions import SecurityError

    with pytest.raises(SecurityError):
        ChatTemplate("{{ messages.__class__.__mro__[1].__subclasses__() }}", bos_token="",
                     eos_token="").render(MESSAGES)
