"""Run the code in the design notes and check (or refresh) the output printed under it.

    python notes/check_notes.py notes/0*.md          # check: exit 1 on a mismatch or error
    python notes/check_notes.py --fill notes/0*.md   # rewrite the output blocks

Besides the code, a note's references are checked against the tree (`check_references`):
every file path it mentions (fxad/..., tests/..., rules/... below fxad/, links to other
notes) must exist, every `fxad.name.name` it mentions must import or be an attribute, and a
table of rule files (header `| file | primitives |`) must list every file under fxad/rules/
that defines primitives, each with exactly the primitives defined there.

A ```python block runs (the blocks of one file share a namespace; cwd is the repository root);
a ```bash block runs in a shell there, except an install block (one that starts with `pip
install`: CI's own set-up runs exactly those commands). If the next fenced block is ```text, it
holds that block's standard output. Blocks fenced as ```py are quoted code and are not run.

Outputs are compared so that the machine cannot matter: LAPACK/BLAS kernels, CPU instruction
sets and libm differ in the last bits, and a result that is zero in exact arithmetic prints as
0. on one machine and -0. on another. So (`same_output`):
  - memory addresses are ignored, and runs of whitespace (line breaks included) count as one
    space, none next to a bracket: NumPy pads every element of an array for a minus sign and
    rewraps it at its width;
  - every other character must be the same, and so must every integer;
  - floats (a '.' or an exponent) are compared as numbers: the sign of zero is ignored; they
    may differ by float noise relative to their size (RTOL); and a last printed digit that is
    at least the 4th significant one may differ by one, the only way noise at a rounding tie
    shows in a rounded print. Any other change is a mismatch.
So a note must not print float noise itself: a result that is zero in exact arithmetic is
printed rounded (`np.round(x, 4)` prints it as 0. or -0.), and a difference at rounding level
as a comparison (`err < 1e-12`), never as its value (1e-17 here may be 0.0 or 3e-16 there).
"""
import contextlib
import io
import math
import os
import re
import subprocess
import sys
import traceback
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # the fxad of this tree, whatever is installed
FENCE = re.compile(r"^```(\w*|\{[\w-]+\}.*?)\s*$")  # ```lang, or a MyST directive: ```{include} x


def blocks(lines):
    """[(lang, start, end)] with start/end the line indices of the fences."""
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m:
            j = i + 1
            while not lines[j].startswith("```"):
                j += 1
            out.append((m.group(1), i, j))
            i = j + 1
        else:
            i += 1
    return out


# A float as Python and NumPy print it (1.5, -0., 2.5e-05, .5, 1e+300), or a complex number
# (1.-0.j, 1+2j, 2.5j), not inside a name (x1.5) or a version (1.2.3); integers are text.
_PART = r"(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"      # a complex number's part may be an int
_COMPLEX = rf"[-+]?(?:{_PART}(?=[-+]))?[-+]?{_PART}j"
FLOAT = re.compile(r"(?<![\w.])(?:" + _COMPLEX +
                   r"|[-+]?(?:\d+\.\d*|\.\d+|\d+(?=[eE]))(?:[eE][-+]?\d+)?)(?![\w.])")
RTOL = 1e-12        # float noise, relative (far below any digit a note prints)
LAST_DIGIT = 1e-3   # a last digit this far down (4th significant or later) may be off by one


def _unit(tok):
    """The place value of tok's last printed digit: 1e-4 for 0.7788, 1e-7 for 1.23e-05."""
    mant, _, exp = tok.lower().partition("e")
    return 10.0 ** (int(exp or 0) - len(mant.partition(".")[2]))


def _skeleton(text):
    s = re.sub(r"\s+", " ", FLOAT.sub("\0", text)).strip()
    return re.sub(r"(?<=[\[(]) | (?=[\])])", "", s)


def same_number(a, b):
    """Whether floats printed as a and b can be the same result on two machines."""
    if a.endswith("j") or b.endswith("j"):  # complex: each part
        parts = [re.fullmatch(rf"([-+]?{_PART}(?=[-+]))?([-+]?{_PART})j", t) for t in (a, b)]
        return None not in parts and all(same_number(p.group(k) or "0", q.group(k) or "0")
                                         for p, q in [parts] for k in (1, 2))
    x, y = float(a), float(b)
    if x == y:  # -0. and 0. included
        return True
    if not (math.isfinite(x) and math.isfinite(y)):
        return False
    d, big = abs(x - y), max(abs(x), abs(y))
    if d <= RTOL * big:
        return True
    u = _unit(a)
    return u == _unit(b) and u <= LAST_DIGIT * big and d <= u * (1 + 1e-6)


def same_output(note, now):
    """(True, "") if `now` prints what `note` says, else (False, the first difference)."""
    note, now = (re.sub(r"0x[0-9a-f]+", "0x…", t) for t in (note, now))
    if _skeleton(note) != _skeleton(now):
        return False, "the text differs"
    for a, b in zip(FLOAT.findall(note), FLOAT.findall(now)):
        if not same_number(a, b):
            return False, f"the note prints {a}, the code now prints {b}"
    return True, ""


def run_file(path, mode):
    lines = open(path).read().split("\n")
    bs = blocks(lines)
    ns = {"__name__": "__note__"}
    os.chdir(ROOT)
    sys.path.insert(0, ROOT)
    replacements, ok = [], True
    for k, (lang, s, e) in enumerate(bs):
        if lang not in ("python", "bash"):
            continue
        code = "\n".join(lines[s + 1:e])
        if lang == "bash" and code.lstrip().startswith("pip install"):
            continue
        if lang == "python":
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    where = f"{os.path.relpath(path, ROOT)}:{s + 2}"  # no checkout path
                    exec(compile(code, where, "exec"), ns)
                except Exception:
                    print(f"ERROR in {path} block at line {s + 1}:", file=sys.stderr)
                    traceback.print_exc()
                    ok = False
            out = buf.getvalue()
        else:
            out = subprocess.run(code, shell=True, capture_output=True, text=True,
                                 cwd=ROOT).stdout
        nxt = bs[k + 1] if k + 1 < len(bs) else None
        has_text = nxt is not None and nxt[0] == "text" and \
            all(not lines[i].strip() for i in range(e + 1, nxt[1]))
        if has_text:
            old = "\n".join(lines[nxt[1] + 1:nxt[2]])
            same, why = same_output(old, out)
            if mode == "check" and not same:
                ok = False
                print(f"MISMATCH {path} line {nxt[1] + 1} ({why}):\n--- note\n{old}\n--- now\n{out}")
            replacements.append((nxt[1] + 1, nxt[2], out.rstrip("\n").split("\n")))
        elif out.strip():
            print(f"note: {path} line {s + 1}: output with no ```text block:\n{out}")
    if mode == "fill":
        for a, b, new in reversed(replacements):
            lines[a:b] = new
        open(path, "w").write("\n".join(lines))
    return ok


# --- references to the tree ----------------------------------------------------------------

PATH = re.compile(r"(?<![\w./-])((?:fxad|tests|notes|benchmarks|examples|\.ci|rules|interpreters|"
                  r"ir|api|numpy|scipy|lax|nn|random)/[\w./<>*-]*[\w>*])")
LINK = re.compile(r"\]\(([\w./-]+\.md)(?:#[\w-]*)?\)")
DOTTED = re.compile(r"(?<![\w.])fxad(?:\.[A-Za-z_]\w*)+")
_BELOW_FXAD = ("rules/", "interpreters/", "ir/", "api/", "numpy/", "scipy/", "lax/", "nn/",
               "random/")


def _path_exists(ref):
    ref = ref.split("::")[0].rstrip(".")
    if any(c in ref for c in "<>*{}"):
        return True  # a pattern (tests/rules/<family>/test_<file>.py), not a file
    if os.path.exists(os.path.join(ROOT, ref)):
        return True
    return ref.startswith(_BELOW_FXAD) and os.path.exists(os.path.join(ROOT, "fxad", ref))


def _dotted_exists(name):
    import importlib
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        for attr in parts[k:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def _rule_files():
    """{file below fxad/: set of primitive names} for every primitive fxad defines."""
    import fxad  # noqa: F401  (defines every primitive)
    from fxad.core import primitives
    out = {}
    for p in primitives():
        if (p.module or "").startswith("fxad."):
            rel = os.path.relpath(p.file, os.path.join(ROOT, "fxad")).replace(os.sep, "/")
            out.setdefault(rel, set()).add(p.name)
    return out


def check_references(path):
    """The problems with what the note at `path` says about the tree (empty: none)."""
    text = open(path).read()
    problems = []
    here = os.path.dirname(path)
    for ref in sorted(set(PATH.findall(text))):
        # a note may name a page beside it, as the site's toctrees do (api/index: api/index.md)
        beside = any(os.path.exists(os.path.join(here, ref + ext)) for ext in ("", ".md"))
        if not _path_exists(ref) and not beside:
            problems.append(f"no such file: {ref}")
    for link in sorted(set(LINK.findall(text))):
        if "/" not in link and not os.path.exists(os.path.join(os.path.dirname(path), link)):
            problems.append(f"no such note: {link}")
    prose = re.sub(r"```text\n.*?```", "", text, flags=re.S)  # (printed output: names of methods)
    for name in sorted(set(DOTTED.findall(prose))):
        if not _dotted_exists(name):
            problems.append(f"no such module or name: {name}")
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if re.match(r"^\|\s*file\s*\|\s*primitives\s*\|", line):
            files = _rule_files()
            listed = {}
            for row in lines[i + 2:]:
                if not row.startswith("|"):
                    break
                cells = [c.strip() for c in row.strip("|").split("|")]
                f = cells[0].strip("`")
                names = re.findall(r"`([^`]*)`", cells[1])
                listed[f] = set(names[0].split()) if names else set()
            for f, names in listed.items():
                have = files.get(f)
                if have is None:
                    problems.append(f"rule table row {f}: no primitive is defined there")
                elif names != have:
                    problems.append(f"rule table row {f}: lists {sorted(names)}, the file "
                                    f"defines {sorted(have)}")
            for f in sorted(set(files) - set(listed)):
                problems.append(f"rule table: {f} (defines {sorted(files[f])}) has no row")
    return problems


if __name__ == "__main__":
    mode = "fill" if "--fill" in sys.argv else "check"
    files = [a for a in sys.argv[1:] if not a.startswith("--")]
    good = True
    for f in files:
        for problem in check_references(os.path.abspath(f)):
            print(f"REFERENCE {f}: {problem}")
            good = False
    good = all([run_file(os.path.abspath(f), mode) for f in files]) and good
    print("OK" if good else "FAILED")
    sys.exit(0 if good else 1)
