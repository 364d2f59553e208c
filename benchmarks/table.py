#!/usr/bin/env python3
"""The results table (issue 8): records every harness program with written-down truth
(java-harness/src/**, format in java-harness/README.md) and, optionally, the real
workloads, analyzes each trace with every detector, and prints a table like Table 1 of
the RVPredict paper — program, threads, events, reads/writes, synchronizations, branches,
races per detector, analysis time per detector — plus recording slowdown and bytes per
event, and precision/recall per detector against the truth. Appends it to
benchmarks/RESULTS.md with the command, the machine and the date.

    benchmarks/table.py                          # harness programs, all detectors
    benchmarks/table.py --workloads loops,h2     # plus real workloads (fast detectors)
    benchmarks/table.py --workloads lucene,xalan,sunflow,jetty   # Debian's libraries
                                                 # (benchmarks/workloads.sh installs them
                                                 # and checks their output under the agent)
    benchmarks/table.py --workloads jetty:hb+shb+m2,derby:hb+shb   # a workload's own detectors
    benchmarks/table.py --detectors hb,shb,m2 --no-append

Judging (java-harness/README.md): a reported signature is a true race when a RACE line
lists it; a false alarm when it is on a NORACE variable (at one of its locations, if it
lists any), or unlisted and reported by a detector sound for every report (shb, m2, mcm,
said), or unlisted on a variable without any RACE line. A RACE whose `by=` (default: all
sound detectors) names a detector that did not report it is a miss for that detector.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JRACE = ROOT / "target/release/jrace"
DEFAULT_BY = ["hb", "shb", "wcp", "cp", "m2", "mcm"]
SOUND_FOR_EVERY_RACE = {"shb", "m2", "mcm", "said"}
J = "/usr/share/java/"
# name: (main class, arguments, jars); the same command lines as benchmarks/workloads.sh.
WORKLOADS = {
    "loops": ("workloads.Loops", ["4", "2000000"], []),
    "h2": ("workloads.Jdbc", ["h2", "4", "1000"], [J + "h2.jar"]),
    "derby": ("workloads.Jdbc", ["derby", "4", "1000"], [J + "derby.jar"]),
    "lucene": ("workloads.Lucene", ["4", "100"], [J + "lucene-core-8.7.0.jar"]),
    "xalan": ("workloads.Xalan", ["4", "4"], [J + "xalan2.jar", J + "serializer.jar"]),
    "sunflow": ("workloads.Sunflow", ["4", "64"], [J + "sunflow.jar"]),
    "jetty": ("workloads.Jetty", ["4", "50"],
              [J + x for x in ("jetty9-server.jar", "jetty9-http.jar", "jetty9-io.jar",
                               "jetty9-util.jar", "servlet-api.jar")]),
}


def parse_truth(path):
    """(main class, races, noraces) or None when the file states no truth."""
    text = path.read_text()
    if not any(l.strip().startswith("// RACE:") for l in text.splitlines()):
        return None
    pkg = re.search(r"^\s*package\s+([\w.]+)\s*;", text, re.M)
    main = (pkg.group(1) + "." if pkg else "") + path.stem
    labels = {}
    for i, line in enumerate(text.splitlines(), 1):
        t = line.strip()
        if t.startswith("// RACE:") or t.startswith("// NORACE:") or "//" not in line:
            continue
        for tok in line[line.index("//") + 2:].split():
            if tok.startswith("@") and re.fullmatch(r"@[\w-]+", tok):
                labels[tok[1:]] = i

    def loc(tok):
        if tok.startswith("@"):
            return f"{path.name}:{labels[tok[1:]]}"
        return tok

    races, noraces = [], []
    for line in text.splitlines():
        t = line.strip()
        if t.startswith("// RACE:"):
            toks = t[len("// RACE:"):].split()
            by = DEFAULT_BY
            if toks and toks[-1].startswith("by="):
                by = toks[-1][3:].split(",")
                toks = toks[:-1]
            races.append((toks[0], tuple(sorted((loc(toks[1]), loc(toks[2])))), by))
        elif t.startswith("// NORACE:"):
            toks = t[len("// NORACE:"):].split()
            noraces.append((toks[0], [loc(x) for x in toks[1:]]))
    return main, races, noraces


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def best_time(cmd, runs):
    best = None
    for _ in range(runs):
        t = time.monotonic()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        d = time.monotonic() - t
        best = d if best is None else min(best, d)
    return best


def stats(trace):
    out = run([str(JRACE), "stats", str(trace)]).stdout
    kinds = {}
    in_kinds = False
    info = {}
    for line in out.splitlines():
        if line.startswith("events by kind:"):
            in_kinds = True
            continue
        if in_kinds and line.startswith("  "):
            k, n = line.split()
            kinds[k] = int(n)
            continue
        m = re.match(r"(\w+):\s+(\d+)", line)
        if m:
            info[m.group(1)] = int(m.group(2))
        m = re.search(r"\(([\d.]+) bytes/event\)", line)
        if m:
            info["bpe"] = float(m.group(1))
    return info, kinds


def judge(truth, report, detectors):
    """Per detector: (true races found, false alarms, missed races)."""
    _, races, noraces = truth
    out = {}
    for d in detectors:
        tp = fp = 0
        found = set()
        for r in report["races"]:
            if d not in r["detectors"]:
                continue
            var = r["variable"]
            locs = tuple(sorted(a["location"] for a in r["accesses"]))
            listed = [x for x in races if x[0] == var and x[1] == locs]
            if listed:
                tp += 1
                found.add((var, locs))
                continue
            bad = any(v == var and (not ls or locs[0] in ls or locs[1] in ls) for v, ls in noraces)
            unlisted_var = not any(x[0] == var for x in races)
            if bad or d in SOUND_FOR_EVERY_RACE or unlisted_var:
                fp += 1
        missed = sum(1 for v, l, by in races if d in by and (v, l) not in found)
        out[d] = (tp, fp, missed)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--detectors", default="hb,shb,wcp,cp,m2,mcm,said,lockset")
    ap.add_argument("--workloads", default="", help="comma list of " + ",".join(WORKLOADS))
    ap.add_argument("--workload-detectors", default="hb,shb,wcp,cp,lockset")
    ap.add_argument("--runs", type=int, default=1, help="timing runs (best of)")
    ap.add_argument("--no-append", action="store_true")
    ap.add_argument("--no-harness", action="store_true", help="only the workloads")
    ap.add_argument("--no-build", action="store_true", help="use target/release as it is")
    args = ap.parse_args()
    detectors = args.detectors.split(",")
    if not args.no_build:
        subprocess.run(["cargo", "build", "--release", "-q", "--workspace"], cwd=ROOT, check=True)
    work = Path(tempfile.mkdtemp(prefix="jrace-table-"))
    classes = work / "classes"
    subprocess.run([str(ROOT / "benchmarks/javac.sh"), str(classes)], check=True)

    programs = []
    for p in [] if args.no_harness else sorted((ROOT / "java-harness/src").rglob("*.java")):
        t = parse_truth(p)
        if t:
            programs.append((t[0], [], [str(classes)], t, detectors))
    for spec in filter(None, args.workloads.split(",")):
        # NAME or NAME:DET+DET...: that workload's own detectors.
        w, _, own = spec.partition(":")
        main_class, wargs, jars = WORKLOADS[w]
        dets = own.split("+") if own else args.workload_detectors.split(",")
        if all(Path(j).exists() for j in jars):
            programs.append((main_class + " " + " ".join(wargs), wargs, [str(classes)] + jars, None, dets))
        else:
            print(f"note: {w} needs {jars} (benchmarks/workloads.sh installs them)", file=sys.stderr)

    rows, totals = [], {d: [0, 0, 0] for d in detectors}
    for name, pargs, cp, truth, dets in programs:
        main_class = name.split()[0]
        java = ["java", "-cp", ":".join(cp), main_class] + pargs
        trace = work / re.sub(r"\W", "_", name)
        base = best_time(java, args.runs)
        t = time.monotonic()
        rec = run([str(JRACE), "record", "-o", str(trace), "--"] + java)
        rec_time = time.monotonic() - t
        if args.runs > 1:
            rec_time = min(rec_time, best_time([str(JRACE), "record", "-o", str(work / "x"), "--"] + java, args.runs - 1))
        info, kinds = stats(trace)
        rep = run([str(JRACE), "analyze", str(trace), "-d", ",".join(dets), "--format", "json"])
        if rep.returncode != 0:
            print(f"{name}: analyze failed: {rep.stderr}", file=sys.stderr)
            continue
        report = json.loads(rep.stdout)
        secs = {d["name"]: d["seconds"] for d in report["detectors"]}
        counts = {d["name"]: d["races"] for d in report["detectors"]}
        verdict = judge(truth, report, dets) if truth else None
        cells = []
        for d in detectors:
            if d not in counts:
                cells.append("–")
                continue
            c = f"{counts[d]}"
            if verdict:
                tp, fp, miss = verdict[d]
                c += f" ({tp}✓" + (f" {fp}✗" if fp else "") + (f" {miss} missed" if miss else "") + ")"
                for i, v in enumerate((tp, fp, miss)):
                    totals[d][i] += v
            cells.append(c + f" {secs[d]:.2f}s")
        syncs = sum(kinds.get(k, 0) for k in ("acquire", "release", "fork", "join", "wait", "wake", "notify", "notifyall", "vread", "vwrite"))
        rows.append(
            f"| {name} | {info.get('threads', 0)} | {info.get('events', 0)} | "
            f"{kinds.get('read', 0)}/{kinds.get('write', 0)} | {syncs} | {kinds.get('branch', 0)} | "
            + " | ".join(cells)
            + f" | {rec_time / base:.1f}x | {info.get('bpe', 0):.2f} |"
        )
        shutil.rmtree(trace, ignore_errors=True)

    head = ("| program | threads | events | reads/writes | syncs | branches | "
            + " | ".join(detectors) + " | recording slowdown | bytes/event |")
    sep = "|" + "---|" * (6 + len(detectors) + 2)
    table = "\n".join([head, sep] + rows)
    pr = ["| detector | true races found | false alarms | missed races | precision | recall |",
          "|---|---|---|---|---|---|"]
    for d in detectors:
        tp, fp, miss = totals[d]
        prec = f"{tp / (tp + fp):.2f}" if tp + fp else "–"
        rec = f"{tp / (tp + miss):.2f}" if tp + miss else "–"
        pr.append(f"| {d} | {tp} | {fp} | {miss} | {prec} | {rec} |")
    text = (table + "\n\nCells: races reported (✓ true races, ✗ false alarms, missed: true races "
            "the detector must find but did not) and analysis time. Precision and recall over "
            "the harness programs' written-down truth:\n\n" + "\n".join(pr))
    print(text)
    if not args.no_append:
        machine = (f"{os.cpu_count()} cores, "
                   + run(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"]).stdout.strip()
                   + ", " + run(["java", "-version"]).stderr.splitlines()[0])
        cmd = "benchmarks/table.py " + " ".join(sys.argv[1:])
        with open(ROOT / "benchmarks/RESULTS.md", "a") as f:
            f.write(f"\n## {time.strftime('%Y-%m-%d', time.gmtime())} — results table (issue 8)\n\n"
                    f"Command: `{cmd.strip()}`\nMachine: {machine}. Recording slowdown: whole-JVM wall "
                    f"time with the agent over without (best of {args.runs}).\n\n{text}\n")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
