"""notes/check_notes.py, the checker behind test_design_notes_print_what_their_code_prints:
it accepts what another CPU, BLAS or libm prints for the same result (the sign of a zero, float
noise, a rounding tie in the last digit) and rejects any change a reader could see."""
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("check_notes", ROOT / "notes" / "check_notes.py")
check_notes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_notes)

SAME = [  # (in the note, printed now): one result, two machines
    ("ok    np.linalg.lstsq: [-0.  -0.5  0. ]", "ok    np.linalg.lstsq: [-0.  -0.5 -0. ]"),
    ("[ 0.   0.5]", "[-0.   0.5]"),                    # the sign column appears
    ("[ 0.  0.5]\nnext", "[-0.   0.5]\nnext"),
    ("-0.", "0."), ("0.0", "-0.0"), ("-0.000e+00", "0.000e+00"), ("x = -0.0,", "x = 0.0,"),
    ("2.9999999999999996", "3.0"),                     # repr of a result 1 ulp away
    ("0.30000000000000004", "0.3"),
    ("[ 2.47308191  5.43656366 22.1671683 ]", "[ 2.47308192  5.43656366 22.1671683 ]"),
    ("0.7788", "0.7789"),                              # a 4th significant digit at a tie
    ("f64[3] at 0x7f3a2b1c", "f64[3] at 0x55d0e1f0"),   # memory addresses
    ("[1. 2. 3.\n 4.]", "[1. 2. 3. 4.]"),               # rewrapped
    ("[1.+0.j 2.-0.j]", "[1.-0.j 2.+0.j]"), ("(-0-0j)", "(0+0j)"), ("-0.j", "0.j"),  # complex
    ("(0.7788+1j)", "(0.7789+1j)"),
]

DIFFERENT = [  # a digit that matters, or the text, changed
    ("0.7788", "0.7790"),                              # two units: no rounding tie does that
    ("-0.023   0.2442  0.7788", "-0.023   0.2542  0.7788"),
    ("[1. 2. 3.]", "[1. 2. 4.]"),
    ("[0.  0.5]", "[0.  0.4]"),
    ("[0. 0.]", "[0.  0.4]"),
    ("0.123", "0.124"),                                # a 3rd significant digit is the number
    ("3.0", "3.1"),
    ("1.0", "-1.0"),                                   # only a zero's sign is noise
    ("5e-200", "0.0"),                                 # hypot(3e-200, 4e-200) is not 0
    ("[5.e-200 1.e+000]", "[0. 1.]"),
    ("[1.e+200 7.07e-01]", "[1.e+200 0.e+00]"),        # a derivative next to a huge value
    ("2.220446049250313e-16", "0.0"),                  # noise must not be printed: it varies
    ("1e+300", "inf"), ("nan", "0.0"), ("inf", "-inf"),
    ("[1. 2.]", "[1. 2. 3.]"),
    ("f64[3]", "f64[4]"), ("line 42", "line 43"),        # integers are exact
    ("b:f64[3] = exp a", "b:f64[3] = log a"),
    ("2.5", "2.5 x"), ("1.5", "1.5e-3"),
    ("(1+2j)", "(1+3j)"), ("1.5j", "-1.5j"), ("[1.+2.j]", "[1.-2.j]"), ("[1.+2.j]", "[2.+2.j]"),
    ("1.5", "1.5j"), ("2.5", "2.5+0j"),
]


@pytest.mark.parametrize("note,now", SAME)
def test_accepts_what_another_machine_prints(note, now):
    assert check_notes.same_output(note, now) == (True, "")
    assert check_notes.same_output(now, note) == (True, "")


@pytest.mark.parametrize("note,now", DIFFERENT)
def test_rejects_a_change_a_reader_can_see(note, now):
    assert not check_notes.same_output(note, now)[0]
    assert not check_notes.same_output(now, note)[0]


NOTE = """# a note

```python
import numpy as np
print(np.round(np.array([0.5, -1e-17, 0.24424]) * {k}, 4))
print("value", 0.1 + 0.2)
```

```text
{out}
```
"""


def _check(tmp_path, k, out):
    note = tmp_path / "note.md"
    note.write_text(NOTE.format(k=k, out=out))
    return subprocess.run([sys.executable, str(ROOT / "notes" / "check_notes.py"), str(note)],
                          capture_output=True, text=True, timeout=120)


def test_the_checker_runs_the_code_and_compares_what_it_prints(tmp_path):
    # what this machine prints, and the same with the zero's sign flipped and the repr noise
    # gone, as another machine may print it
    for out in ("[ 0.5    -0.      0.2442]\nvalue 0.30000000000000004",
                "[0.5    0.     0.2442]\nvalue 0.3"):
        r = _check(tmp_path, 1, out)
        assert r.returncode == 0 and r.stdout.strip().endswith("OK"), r.stdout + r.stderr
    # the code now prints 0.4884 where the note says 0.2442 (a change in fxad or the note)
    r = _check(tmp_path, 2, "[ 0.5    -0.      0.2442]\nvalue 0.30000000000000004")
    assert r.returncode == 1 and "MISMATCH" in r.stdout, r.stdout + r.stderr
    assert "the note prints 0.5, the code now prints 1." in r.stdout, r.stdout


def test_every_note_refers_to_what_is_in_the_tree():
    """Every file path, `fxad.` name and rule-table row in notes/ and the README is checked
    against the tree
    (the full run, with the code blocks, is test_design_notes_print_what_their_code_prints)."""
    problems = {str(p.name): check_notes.check_references(str(p))
                for p in sorted((ROOT / "notes").glob("*.md")) + [ROOT / "README.md"]}
    assert not any(problems.values()), {k: v for k, v in problems.items() if v}


def test_the_reference_check_sees_stale_paths_names_and_table_rows(tmp_path):
    note = tmp_path / "note.md"
    note.write_text("""# a note

See fxad/rules/elementwise/transcendental.py and `fxad/rules/elementwise.py`, tests for
`tests/rules/<family>/test_<file>.py`, `fxad.lax.sin`, `fxad.lax.sine`, [a](missing.md).

| file | primitives |
|---|---|
| `rules/elementwise/ufunc_math.py` | `exp2 hypot log10 log2` |
| `rules/structural/nothing.py` | `x` |
""")
    problems = check_notes.check_references(str(note))
    assert "no such file: fxad/rules/elementwise.py" in problems
    assert "no such module or name: fxad.lax.sine" in problems
    assert "no such note: missing.md" in problems
    assert any("ufunc_math.py: lists" in p and "float_power" in p for p in problems)
    assert any("nothing.py: no primitive" in p for p in problems)
    assert any("rules/structural/shape.py" in p and "has no row" in p for p in problems)
    assert not any(p.startswith(("no such file: fxad/rules/elementwise/transcendental",
                                 "no such file: tests/rules/<family>")) or
                   p == "no such module or name: fxad.lax.sin" for p in problems), problems
