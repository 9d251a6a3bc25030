"""plumb/peer as the parity benches print it: plumb's own statistics (`plumb ratio`),
so a bench and `plumb compare` judge alike. Imported by compare-dbbench.sh,
compare-sysbench.sh and compare-fio.sh (their Python runs with bench/ on sys.path)."""
import json
import subprocess


def judged(plumb, base, other, digits=3):
    """`ratio (lo-hi), p P`: the ratio of medians other/base, Welch's 95% interval on
    ln values and the permutation test's p (exact for a few repeats); "n/a" when a side
    is empty or plumb refuses the values."""
    if not base or not other:
        return "n/a"
    r = subprocess.run([plumb, "ratio", "--base", ",".join(map(str, base)),
                        "--other", ",".join(map(str, other)), "--json"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return "n/a"
    j = json.loads(r.stdout)
    ci = f" ({j['ci'][0]:.{digits}f}-{j['ci'][1]:.{digits}f})" if j["ci"] else ""
    return f"{j['ratio']:.{digits}f}{ci}, p {j['p']:.3f}"
