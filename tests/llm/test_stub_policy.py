"""The stub policy's proposal rules: follow the feedback with a random step, change code a literal at
a time, never install a value TextGrad shortened, and stay deterministic per seed."""

from __future__ import annotations

import json
import random
import re

from trace_bench.llm.stub import StubPolicy
from trace_bench.llm.stub_mutations import OVERSHOOT, Hint, feedback_hint, mutate_code_literal

CODE = 'def f(self, x):\n    """Return 2 things, see issue 7."""\n    return x + 5  # plus 9\n'


def _optoprime_prompt(value: float, feedback: str) -> list[dict[str, str]]:
    user = (f"#Instruction\nMake the output equal 3.\n\n#Variables\n(float) x0={value}\n\n#Outputs\n(float) out={value}\n\n"
            f"#Feedback\n{feedback}\n\nYour response:")
    return [{"role": "system", "content": 'Output a "suggestion" as JSON.'}, {"role": "user", "content": user}]


def test_feedback_hints() -> None:
    assert feedback_hint("The output 0 is off by 3; increase it.") == Hint(1, 3.0)
    assert feedback_hint("ID [0]: off by 2; decrease it.\nID [1]: off by 4; decrease it.") == Hint(-1, 3.0)
    assert feedback_hint("The value is too low.") == Hint(1, None)
    assert feedback_hint("f(x)=0.2; lower is better for both.") == Hint()


def test_numbers_follow_the_feedback_with_steps_of_varying_size() -> None:
    proposals = []
    for seed in range(30):
        answer = StubPolicy(seed=seed).respond(_optoprime_prompt(0.0, "The output 0 is off by 3; increase it."))
        proposals.append(json.loads(answer)["suggestion"]["x0"])
    assert all(0.0 < p <= 3 * OVERSHOOT[1] for p in proposals), proposals
    assert 3.0 not in proposals and len(set(proposals)) == len(proposals)
    assert any(p < 3 for p in proposals) and any(p > 3 for p in proposals), "steps under- and overshoot"
    assert any(p > 6 for p in proposals), "some overshoot so far they are worse than the current value"


def test_candidates_are_proposed_but_not_always() -> None:
    answers = [json.loads(StubPolicy(seed=s, candidates=[{"x": 1.5}]).respond(
        _optoprime_prompt(0.0, "off by 3; increase it.")))["suggestion"]["x0"] for s in range(40)]
    assert 1.5 in answers and sum(a != 1.5 for a in answers) > 20


def test_code_changes_one_literal_outside_strings_and_comments() -> None:
    changed = {mutate_code_literal(CODE, random.Random(seed)) for seed in range(20)}
    for code in changed:
        assert code is not None and code != CODE
        assert '"""Return 2 things, see issue 7."""' in code and "# plus 9" in code
        assert re.fullmatch(r"    return x \+ \d+  # plus 9", code.splitlines()[2])
    assert mutate_code_literal("def f(self, x):\n    return x\n", random.Random(0)) is None


def _textgrad_update(value: str, context: str = "") -> list[dict[str, str]]:
    return [{"role": "user", "content": f"{context}\nThe variable is the text within the following span: "
                                        f"<VARIABLE> {value} </VARIABLE>\n<FEEDBACK>increase it</FEEDBACK>\n"
                                        "Send the improved variable as <IMPROVED_VARIABLE>{the improved variable}"
                                        "</IMPROVED_VARIABLE>"}]


def test_a_shortened_textgrad_value_is_never_installed() -> None:
    words = " ".join(f"w{i}" for i in range(30))
    short = " ".join(words.split()[:10]) + " (...) " + " ".join(words.split()[-10:])
    policy = StubPolicy(seed=1)
    assert "IMPROVED_VARIABLE" not in policy.respond(_textgrad_update(short))
    answer = policy.respond(_textgrad_update(short, context=f"Parameter text:\n{words}\n"))
    assert re.search(r"<IMPROVED_VARIABLE>(.*)</IMPROVED_VARIABLE>", answer, re.S).group(1).startswith("w0 w1")
    assert "(...)" not in answer


def test_answers_are_a_function_of_seed_and_prompt() -> None:
    prompt = _optoprime_prompt(1.0, "The output 1 is off by 2; increase it.")
    first = [StubPolicy(seed=3).respond(prompt) for _ in range(2)]
    assert first[0] == first[1]
    assert StubPolicy(seed=4).respond(prompt) != first[0]
