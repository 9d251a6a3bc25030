"""The runs of the newest suite in a store, for the seeds' scripts (bench/seeds/NNN.sh):
each run's `plumb show --json` document, with its variant split into its parts; and
the helpers every script's last section shares."""
import json
import subprocess


def newest_suite(plumb, store, *show_args, suite=None):
    """[(variant parts, document)] of every run of the store's newest suite (or of
    suite `suite`); `show_args` are passed to each `plumb show` (e.g. "--window", "10")."""
    def cmd(*a):
        return json.loads(subprocess.run([plumb, *a, "--store", store], check=True,
                                         capture_output=True, text=True).stdout)
    runs = cmd("runs", "--json", "--limit", "100000")
    if suite is None:
        suite = max(r["suite_id"] for r in runs if r.get("suite_id"))
    out = []
    for r in runs:
        if r.get("suite_id") == suite:
            doc = cmd("show", str(r["id"]), "--json", *show_args)
            out.append((doc["run"]["options"]["variant"].split("/"), doc))
    return out


def suite_file(path):
    """The suite file as a dict (tomllib), for the figures a script compares to its
    seed's: what the file asks, before `--scale`."""
    import tomllib
    with open(path, "rb") as f:
        return tomllib.load(f)


def cpu_model():
    """The CPU's model name, which every ratio a seed's script prints is reported beside."""
    with open("/proc/cpuinfo") as f:
        return next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")


def differences(items):
    """Prints the list every seed's output ends with: each way this run still differs
    from the case its seed ran, with the reason, so the tables are never read as the
    seed's own. `items` are (what, why) pairs."""
    print("\n### What still differs from the seed, and why\n")
    for what, why in items:
        print(f"- {what}: {why}")


def suites(plumb, store):
    """The ids of every suite in the store, oldest first."""
    runs = json.loads(subprocess.run([plumb, "runs", "--json", "--limit", "100000",
                                      "--store", store], check=True, capture_output=True,
                                     text=True).stdout)
    return sorted({r["suite_id"] for r in runs if r.get("suite_id")})
