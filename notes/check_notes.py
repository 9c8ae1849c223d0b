"""Run the code in the design notes and check (or refresh) the output printed under it.

    python notes/check_notes.py notes/0*.md          # check: exit 1 on a mismatch or error
    python notes/check_notes.py --fill notes/0*.md   # rewrite the output blocks

A ```python block runs (the blocks of one file share a namespace; cwd is the repository root);
a ```bash block runs in a shell there. If the next fenced block is ```text, it holds that
block's standard output. Memory addresses are ignored when comparing. Blocks fenced as ```py
are quoted code and are not run.
"""
import contextlib
import io
import os
import re
import subprocess
import sys
import traceback
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FENCE = re.compile(r"^```(\w*)\s*$")


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


def norm(s):
    return re.sub(r"0x[0-9a-f]+", "0x…", s).rstrip()


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
            if mode == "check" and norm(old) != norm(out):
                ok = False
                print(f"MISMATCH {path} line {nxt[1] + 1}:\n--- note\n{old}\n--- now\n{out}")
            replacements.append((nxt[1] + 1, nxt[2], out.rstrip("\n").split("\n")))
        elif out.strip():
            print(f"note: {path} line {s + 1}: output with no ```text block:\n{out}")
    if mode == "fill":
        for a, b, new in reversed(replacements):
            lines[a:b] = new
        open(path, "w").write("\n".join(lines))
    return ok


if __name__ == "__main__":
    mode = "fill" if "--fill" in sys.argv else "check"
    files = [a for a in sys.argv[1:] if not a.startswith("--")]
    good = all([run_file(os.path.abspath(f), mode) for f in files])
    print("OK" if good else "FAILED")
    sys.exit(0 if good else 1)
