"""Leakage search: what counts as a held-out item found in a state, and what does not."""

from __future__ import annotations

from trace_bench.integrity import mask, normalise, scan_states

QUESTION = "Which river flows past the lighthouse of the fictional harbour town of Quarnholt on old maps?"
ANSWER = "The Silver Wend, below the chalk cliffs"
TEST = {"inputs": [QUESTION, "What colour is the ninth door of the Vellin archive in the story?"],
        "infos": [ANSWER, {"answer": "a pale green door with iron studs", "id": 7}]}


def scan(prompt: str, **kwargs: object) -> object:
    return scan_states({"best": [("prompt", prompt)]}, {"test": TEST}, **kwargs)  # type: ignore[arg-type]


def test_a_verbatim_answer_is_found_whatever_its_case_and_spacing() -> None:
    result = scan("You are helpful.\nHint:   the   SILVER wend, below\tthe chalk cliffs!")
    assert result.leaked == {"test": [0]} and result.leaked_count("test") == 1
    (finding,) = result.findings
    assert (finding.kind, finding.state, finding.parameter, finding.in_initial) == ("answer", "best", "prompt", False)
    assert "chalk" not in finding.excerpt and finding.excerpt.startswith("the silver wend")


def test_answers_inside_structures_and_long_input_runs_are_found() -> None:
    result = scan("Remember: a pale green door with iron studs. Also: which river flows past the lighthouse of the "
                  "fictional harbour town of quarnholt on old maps")
    assert result.leaked["test"] == [0, 1]
    assert {(f.item, f.kind) for f in result.findings} == {(0, "input"), (1, "answer")}
    assert next(f for f in result.findings if f.kind == "input").words == 13


def test_what_is_not_a_leak() -> None:
    assert scan("Answer briefly. Rivers often flow past lighthouses on old maps.").leaked == {"test": []}
    assert scan("The Silver Wend, below the chalk cliffsides").leaked == {"test": []}, "part of a longer word"
    assert scan("Which river flows past the lighthouse of the fictional harbour").leaked == {"test": []}, \
        "twelve words of the question are not the 13-word run"
    short = scan_states({"best": [("prompt", "72 is the answer to many things, and so is Paris")]},
                        {"test": {"inputs": ["What is 8 times 9?"], "infos": ["72"]}})
    assert short.leaked == {"test": []}, "short answers and short inputs occur by chance and are not searched"
    assert scan_states({"best": [("prompt", ANSWER)]}, {"test": None}).searched == {}


def test_items_shared_with_training_are_not_held_out() -> None:
    result = scan(ANSWER, train={"inputs": [QUESTION], "infos": [ANSWER]})
    assert result.leaked == {"test": []} and result.shared_with_train == {"test": 1} and result.searched == {"test": 2}


def test_validation_apart_and_initial_states_and_several_parameters() -> None:
    states = {"best": [("system", "plain"), ("examples", ["x", {"note": ANSWER}])], "final": [("system", ANSWER)]}
    result = scan_states(states, {"test": TEST, "validation": {"inputs": ["v"], "infos": ["a pale green door with "
                                                                                             "iron studs"]}},
                         initial=[("system", "Seed prompt: " + ANSWER)])
    assert result.leaked == {"test": [0], "validation": []}
    assert {(f.state, f.parameter) for f in result.findings} == {("best", "examples"), ("final", "system")}
    assert all(f.in_initial for f in result.findings), "the seed prompt already held it: the task leaks"
    assert result.leaked_count("validation") == 0 and result.leaked_count("other") is None


def test_normalise_and_mask() -> None:
    assert normalise("  Ｆｕｌｌ\u00a0WIDTH\n\ttext ") == "full width text"
    assert mask("one two three four five") == "one two three … (+2 words)"
    assert mask("supercalifragilistic") == "supe… (20 chars)" and "secret" not in mask("secret")


def test_answers_hidden_in_common_encodings_are_found_and_named() -> None:
    """Issue 40, finding 7: the scan matched verbatim text only: 0 of 5 hidden tests once zlib+base64 encoded."""
    import base64
    import binascii
    import json
    import zlib

    hidden = {
        "base64+zlib": f'DATA = "{base64.b64encode(zlib.compress(ANSWER.encode())).decode()}"',
        "hex": f"DATA = bytes.fromhex('{binascii.hexlify(ANSWER.encode()).decode()}')",
        "base64+gzip": f"DATA = '{base64.b64encode(__import__('gzip').compress(ANSWER.encode())).decode()}'",
        "reversed": f"DATA = {ANSWER[::-1]!r}[::-1]",
        "escaped": "DATA = " + json.dumps(ANSWER).replace("e", "\\u0065"),
    }
    for encoding, code in hidden.items():
        result = scan(code)
        assert result.leaked == {"test": [0]}, encoding
        (finding,) = result.findings
        assert finding.encoding == encoding, (encoding, finding)
    noise = base64.b64encode(bytes(range(256)) * 4).decode() + binascii.hexlify(b"\x00\xff" * 64).decode()
    assert scan(f"KEY = '{noise}'").leaked == {"test": []}


def test_candidate_outputs_are_searched_as_a_state_of_their_own() -> None:
    result = scan_states({"best": [("prompt", "Be brief.")], "outputs": [("t:solve", f"printed: {ANSWER}")]},
                         {"test": TEST})
    assert result.leaked == {"test": [0]} and result.findings[0].state == "outputs"


def test_strings_the_training_split_holds_too_are_no_secret() -> None:
    held_out = {"inputs": ["HumanEval/3 (held-out tests)"],
                "infos": [{"task_id": "HumanEval/3", "entry_point": "below_zero_balance", "test": ANSWER}]}
    train = {"inputs": ["HumanEval/3"], "infos": [{"task_id": "HumanEval/3", "entry_point": "below_zero_balance",
                                                  "test": "assert candidate([]) is False"}]}
    state = {"best": [("code", "def below_zero_balance(operations):\n    return False\n")]}
    assert scan_states(state, {"test": held_out}, train=train).leaked == {"test": []}
    assert scan_states(state, {"test": held_out}).leaked == {"test": [0]}, "without the training split it is searched"
