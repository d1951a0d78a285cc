"""`SignatureChatAdapter` (issue 26): DSPy's ChatAdapter with each signature's system message built once, attached to
every LM `make_lm` builds but ``local``; the messages it formats are ChatAdapter's, byte for byte."""

from __future__ import annotations

import dspy

from memopt.lm import make_lm
from memopt.lm.adapter import SchemaJSONAdapter, SignatureChatAdapter, adapter_scope, preferred_adapter
from memopt.lm.build import _mark
from memopt.lm.local import llama_cpp_lm
from memopt.lm.spec import parse_lm_specs
from memopt.systems.registry import make_system


def _signatures() -> list[type[dspy.Signature]]:
    from memopt.lm.signatures import JudgeAnswer, JudgeContains, LocateFault

    found = []
    for pipeline in ("mem0", "rag", "long_context", "evermemos"):
        system = make_system(pipeline)
        for op, text in system.instructions().items():
            found.append(system.op_spec(op).signature.with_instructions(text))
    found += [JudgeAnswer, JudgeContains, LocateFault]
    return found


def test_every_message_is_chat_adapters_byte_for_byte():
    ours, dspys = SignatureChatAdapter(), dspy.ChatAdapter()
    signatures = _signatures()
    assert len(signatures) >= 10
    for signature in signatures:
        inputs = {name: f"a value of {name}" for name in signature.input_fields}
        expected = dspys.format(signature, [], inputs)
        assert ours.format(signature, [], inputs) == expected
        assert ours.format(signature, [], inputs) == expected  # from the kept system message


class _Counting(SignatureChatAdapter):
    def __init__(self) -> None:
        super().__init__()
        self.built = 0

    def format_field_structure(self, signature: type[dspy.Signature]) -> str:
        self.built += 1
        return super().format_field_structure(signature)


def test_the_system_message_is_built_once_per_signature_and_follows_new_instructions():
    system = make_system("mem0")
    adapter, signature = _Counting(), system.op_spec("extract").signature
    first = signature.with_instructions("Extract the facts.")
    for _ in range(3):
        adapter.format(first, [], {name: "x" for name in first.input_fields})
    assert adapter.built == 1
    second = signature.with_instructions("Extract every fact of both speakers.")
    message = adapter.format_system_message(second)
    assert adapter.built == 2 and "Extract every fact of both speakers." in message
    assert "Extract every fact" not in adapter.format_system_message(first)


def test_make_lm_attaches_it_to_every_lm_but_local():
    for spec in ("sim", "openai/gpt-4.1-mini@http://127.0.0.1:9/v1"):
        assert isinstance(preferred_adapter(make_lm(spec)), SignatureChatAdapter), spec
    local = llama_cpp_lm("http://127.0.0.1:9/v1", "smollm2")
    assert isinstance(preferred_adapter(_mark(local, parse_lm_specs("openai/smollm2@http://127.0.0.1:9/v1"))),
                      SchemaJSONAdapter)


def test_an_adapter_the_caller_configured_wins():
    lm = make_lm("sim")
    with dspy.context(lm=lm), adapter_scope(lm):
        assert isinstance(dspy.settings.adapter, SignatureChatAdapter)
    chosen = dspy.JSONAdapter()
    with dspy.context(lm=lm, adapter=chosen), adapter_scope(lm):
        assert dspy.settings.adapter is chosen
