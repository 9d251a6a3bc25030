"""The runs of the newest suite in a store, for the seeds' scripts (bench/seeds/NNN.sh):
each run's `plumb show --json` document, with its variant split into its parts."""
import json
import subprocess


def newest_suite(plumb, store, *show_args):
    """[(variant parts, document)] of every run of the store's newest suite; `show_args`
    are passed to each `plumb show` (e.g. "--window", "10")."""
    def cmd(*a):
        return json.loads(subprocess.run([plumb, *a, "--store", store], check=True,
                                         capture_output=True, text=True).stdout)
    runs = cmd("runs", "--json", "--limit", "100000")
    suite = max(r["suite_id"] for r in runs if r.get("suite_id"))
    out = []
    for r in runs:
        if r.get("suite_id") == suite:
            doc = cmd("show", str(r["id"]), "--json", *show_args)
            out.append((doc["run"]["options"]["variant"].split("/"), doc))
    return out
