#!/usr/bin/env python3
# One injected cost, judged by duets: TRIALS × `plumb ab --duet --rounds 10` of the memory
# engine's readrandom against itself with PLUMB_TEST_MEMORY_OP_ROUNDS=ROUNDS on B, each
# judged at 6 and 10 rounds by `plumb ratio --paired` over its blocks of two (as plumb ab
# judges them, p <= 0.05). Prints one Markdown row: found at 6 and 10 rounds, the median
# ratio and the blocks' scatter. The injected work is not linear in its rounds (a short
# chain hides in the lookup's cache misses), so pick ROUNDS by its measured ratio: on the
# 2-vCPU VM 59 rounds made a 5% slowdown (bench/README.md, issue 40).
#
#   python3 bench/duet-fixed.py target/release/plumb 59 20
import json, math, statistics, subprocess, sys, tempfile

P, R, trials = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
store = tempfile.mktemp(suffix=".sqlite", dir="/var/tmp")
kv=["kv","--engine","memory","--benchmarks","fillseq,readrandom","--duration","1"]
def run(a): return subprocess.run([P,*a],check=True,capture_output=True,text=True).stdout
def paired(a,b):
    blk=lambda v:[math.sqrt(v[i]*v[i+1]) for i in range(0,len(v)-1,2)]
    j=json.loads(run(["ratio","--paired","--json","--base",",".join(map(str,blk(a))),"--other",",".join(map(str,blk(b)))]))
    return j["p"] is not None and j["p"]<=0.05
res={6:[],10:[]}; ratios=[]; sds=[]
for t in range(trials):
    j=json.loads(run(["ab","--duet","--rounds","10","--step","readrandom","--json","--store",store,"--b-env",f"PLUMB_TEST_MEMORY_OP_ROUNDS={R}","--",*kv]))
    s=next(s for s in j["steps"] if s["step"]=="readrandom")
    for n in res: res[n].append(paired(s["a"][:n],s["b"][:n]))
    ratios.append(s["ratio"])
    d=[math.log(b/a) for a,b in zip(s["a"],s["b"])]
    sds.append(statistics.stdev([(d[i]+d[i+1])/2 for i in range(0,len(d)-1,2)]))
    print(f"trial {t+1}: ratio {s['ratio']:.3f} sig6 {res[6][-1]} sig10 {res[10][-1]}", file=sys.stderr, flush=True)
print(f"| B with {R} rounds/op | {trials} | {sum(res[6])}/{trials} | {sum(res[10])}/{trials} | {statistics.median(ratios):.3f} | block sd median {statistics.median(sds):.4f} max {max(sds):.4f} |")
