"""CrossEncoderJudge on a tiny, randomly initialised BERT NLI head built here (no real NLI
model can be had offline): checks label selection and probabilities against the model itself."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("sentence_transformers")
torch = pytest.importorskip("torch")

from thoughtloom.core.errors import ConfigError  # noqa: E402

WORDS = "the a cat dog sat on mat is in paris france tower llama".split()


def tiny_model(folder, num_labels=3):
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    folder.mkdir()
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS) + "\n")
    labels = {0: "contradiction", 1: "entailment", 2: "neutral"} if num_labels == 3 else {0: "LABEL_0"}
    config = BertConfig(vocab_size=5 + len(WORDS), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=64, num_labels=num_labels,
                        id2label=labels, label2id={v: k for k, v in labels.items()})
    torch.manual_seed(0)
    BertForSequenceClassification(config).save_pretrained(folder)
    BertTokenizer(str(vocab)).save_pretrained(folder)
    return folder


def reference_logits(folder, pairs):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
    enc = tok([p for p, _ in pairs], [h for _, h in pairs], padding=True, return_tensors="pt")
    with torch.no_grad():
        return model(**enc).logits


PAIRS = [("the cat sat on the mat", "a cat is on a mat"), ("paris is in france", "the llama is a dog")]


async def test_entailment_probability_is_the_softmax_of_the_entailment_label(tmp_path, no_network):
    from thoughtloom.entail import CrossEncoderJudge

    folder = tiny_model(tmp_path / "nli")
    judge = CrossEncoderJudge(folder)
    assert "HF_HUB_OFFLINE" not in os.environ  # offline by argument (local_files_only), not by a global
    assert judge.label_index == 1 and judge.num_labels == 3
    probs = await judge.judge(PAIRS)
    expected = torch.softmax(reference_logits(folder, PAIRS), dim=-1)[:, 1].tolist()
    assert probs == pytest.approx(expected, abs=1e-5)
    assert all(0.0 < p < 1.0 for p in probs)
    assert CrossEncoderJudge(folder, label_config("neutral")).label_index == 2
    with pytest.raises(ConfigError, match="cannot tell which"):
        CrossEncoderJudge(folder, label_config("banana"))


async def test_single_logit_model_gives_a_sigmoid(tmp_path):
    from thoughtloom.entail import CrossEncoderJudge

    folder = tiny_model(tmp_path / "one", num_labels=1)
    probs = await CrossEncoderJudge(folder).judge(PAIRS)
    expected = torch.sigmoid(reference_logits(folder, PAIRS)[:, 0]).tolist()
    assert probs == pytest.approx(expected, abs=1e-5)


def test_missing_folder_is_a_config_error(tmp_path):
    from thoughtloom.entail import CrossEncoderJudge

    with pytest.raises(ConfigError, match="cross-encoder model folder not found"):
        CrossEncoderJudge(tmp_path / "nope")


def label_config(label):
    from thoughtloom.entail import CrossEncoderConfig

    return CrossEncoderConfig(label=label)
